using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Saito.Registry.Notices;

public static class NoticesServiceCollectionExtensions
{
    /// <summary>
    /// Guardian notices: binds and validates <c>Notices</c> (checked at start), and registers
    /// <see cref="GuardianNotices"/> (to queue arrivals with a check-in), <see cref="NoticeSignal"/> (to wake the
    /// sender after the check-in commits), and the <see cref="AbsenceWatcher"/> and <see cref="NoticeSender"/>
    /// background services (also resolvable as themselves). Expects what the registry's hosting registers:
    /// <c>RegistryContextFactory</c>, <c>RegistryMigrator</c> (the services wait for its <c>Ready</c>) and the
    /// <c>School</c> options; uses the registered <see cref="TimeProvider"/>, or the system clock.
    /// </summary>
    public static IServiceCollection AddGuardianNotices(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<NoticeOptions>().BindConfiguration(NoticeOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<NoticeOptions>, NoticeOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton<GuardianNotices>();
        services.TryAddSingleton<NoticeSignal>();
        services.TryAddSingleton<AbsenceWatcher>();
        services.TryAddSingleton<NoticeSender>();
        services.AddHostedService(sp => sp.GetRequiredService<AbsenceWatcher>());
        services.AddHostedService(sp => sp.GetRequiredService<NoticeSender>());
        return services;
    }
}

using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Saito.Registry.CheckIns;
using Saito.Registry.Data;
using Saito.Registry.Notices;
using Saito.Registry.Timetable;

namespace Saito.Registry.Hosting;

public static class RegistryHostingExtensions
{
    /// <summary>
    /// The registry: <c>School</c> options (validated at start), contexts of the configured provider on the hot-tier
    /// database (scoped <see cref="RegistryDbContext"/> for requests, <see cref="RegistryContextFactory"/> for
    /// background work), the start-up migrator, check-ins (with <c>CheckIns</c> options), the timetable's session planning (which binds and validates <c>School</c>) and the guardian notices (outbox, absence watcher, sender). The host supplies <see cref="Saito.Storage.IStorageReady"/> (Saito.Ingestion's start-up step).
    /// </summary>
    public static IHostApplicationBuilder AddSaitoRegistry(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        services.TryAddSingleton(TimeProvider.System);
        services.AddSingleton<RegistryContextFactory>();
        services.AddScoped<RegistryDbContext>(sp => sp.GetRequiredService<RegistryContextFactory>().Create());
        services.AddSingleton<RegistryMigrator>();
        services.AddHostedService(sp => sp.GetRequiredService<RegistryMigrator>());
        services.AddOptions<CheckInOptions>().BindConfiguration(CheckInOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CheckInOptions>, CheckInOptionsValidator>());
        services.AddSingleton<CheckInService>();
        services.AddTimetable();
        services.AddGuardianNotices();
        services.AddSingleton<ICheckInObserver, ArrivalNotices>();
        return builder;
    }
}

using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;

namespace Saito.Registry.Timetable;

public static class TimetableServiceCollectionExtensions
{
    /// <summary>
    /// The session planner (for the API's "plan now") and the hourly <see cref="SessionPlanningService"/>, with the
    /// <c>School</c> options bound and validated at start (binding them again elsewhere is harmless). The host also
    /// registers what the registry needs: <see cref="RegistryContextFactory"/> and the <see cref="RegistryMigrator"/>
    /// singleton the service waits for.
    /// </summary>
    public static IServiceCollection AddTimetable(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<SchoolOptions>().BindConfiguration(SchoolOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<SchoolOptions>, SchoolOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton(sp => new SessionPlanner(sp.GetRequiredService<IOptions<SchoolOptions>>().Value.Zone));
        services.AddHostedService<SessionPlanningService>();
        return services;
    }
}

using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;
using Saito.Registry.Tests.Infrastructure;
using Saito.Registry.Timetable;
using Saito.Storage;

namespace Saito.Registry.Tests.Timetable;

/// <summary>What <c>AddTimetable</c> gives the host, and the <c>School:PlanDays</c> setting.</summary>
public sealed class AddTimetableTests
{
    private static ServiceProvider Services(params (string Key, string Value)[] settings)
    {
        var configuration = new ConfigurationBuilder()
            .AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>(s.Key, s.Value)))
            .Build();
        var services = new ServiceCollection()
            .AddLogging()
            .AddSingleton<IConfiguration>(configuration)
            .AddSingleton(Options.Create(new StorageOptions()))
            .AddSingleton<RegistryContextFactory>()
            .AddSingleton<IStorageReady, StorageAlreadyReady>()
            .AddSingleton<RegistryMigrator>();
        return services.AddTimetable().BuildServiceProvider();
    }

    [Fact]
    public void The_host_gets_the_planning_service_and_a_planner_in_the_school_time_zone_planning_fourteen_days()
    {
        using var services = Services(("School:TimeZone", "America/New_York"));

        services.GetServices<IHostedService>().ShouldContain(s => s is SessionPlanningService);
        services.GetRequiredService<SessionPlanner>().Zone.Id.ShouldBe("America/New_York");
        services.GetRequiredService<IOptions<SchoolOptions>>().Value.PlanDays.ShouldBe(14);
    }

    [Theory]
    [InlineData("-1")]
    [InlineData("367")]
    public void PlanDays_outside_zero_to_a_year_fails_validation(string planDays)
    {
        using var services = Services(("School:PlanDays", planDays));

        var ex = Should.Throw<OptionsValidationException>(() => services.GetRequiredService<IOptions<SchoolOptions>>().Value);

        ex.Message.ShouldContain($"School:PlanDays must be 0 to 366 (got {planDays})");
    }
}

using Saito.Ingestion.Hosting;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Hosting;
using Saito.Server.Api;
using Saito.Server.Dashboard;
using Saito.Server.Metrics;
using Saito.Server.Registry;
using Saito.Server.Security;
using Saito.Storage.Archive;

namespace Saito.Server;

/// <summary>Saito's composition, shared by Program.cs and the tests (which start it on free ports).</summary>
public static class SaitoApp
{
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        var builder = WebApplication.CreateBuilder(args);
        builder.AddSaitoConfiguration();
        builder.Services.AddSingleton(DataLocation.Of(builder.Configuration));

        // Ingestion first: hosted services stop in reverse order, so the broker (or the external consumer) stops
        // taking messages before the writers drain the queue.
        builder.AddSaitoIngestion();
        bool embedded = builder.Configuration.GetMqttMode() != MqttMode.External;
        if (embedded)
        {
            builder.AddSaitoMqttBroker();
            builder.AddSaitoSecurity();
        }
        else
        {
            SecurityExtensions.AddHubSites(builder.Services);
        }

        builder.AddSaitoRegistryGlue();
        builder.AddSaitoApi();
        builder.AddSaitoDashboard();
        builder.AddSaitoMetrics();
        builder.Services.AddHostedService<TryItReport>();
        builder.Services.AddOptions<ArchiverOptions>().BindConfiguration(ArchiverOptions.SectionName).ValidateOnStart();
        builder.Services.AddSingleton<IValidateOptions<ArchiverOptions>, ArchiverOptionsValidator>();
        builder.Services.AddOptions<ArchiveScheduleOptions>().BindConfiguration(ArchiveScheduleOptions.SectionName).ValidateOnStart();
        builder.Services.AddSingleton<IValidateOptions<ArchiveScheduleOptions>, ArchiveScheduleOptionsValidator>();
        builder.Services.AddSingleton<ScheduledArchiver>();
        builder.Services.AddHostedService(sp => sp.GetRequiredService<ScheduledArchiver>());
        configure?.Invoke(builder);
        // Last, so that every logging provider, a test's included, writes escaped text (docs/security.md).
        builder.Services.AddEscapedLogging();

        var app = builder.Build();
        app.UseLoopbackHostNames();
        app.MapHealthChecks("/health", HealthResponse.Options);
        app.MapSaitoApi();
        app.MapSaitoDashboard();
        app.MapSaitoMetrics();
        if (embedded)
        {
            app.MapSaitoMqttEndpoints();
        }

        return app;
    }
}

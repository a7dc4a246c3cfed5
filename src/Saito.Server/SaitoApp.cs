using Saito.Ingestion.Hosting;
using Saito.Mqtt.Hosting;

namespace Saito.Server;

/// <summary>Saito's composition, shared by Program.cs and the tests (which start it on free ports).</summary>
public static class SaitoApp
{
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        var builder = WebApplication.CreateBuilder(args);
        builder.AddSaitoConfiguration();

        // Ingestion first: hosted services stop in reverse order, so the broker (or the external consumer) stops
        // taking messages before the writers drain the queue.
        builder.AddSaitoIngestion();
        bool embedded = builder.Configuration.GetMqttMode() != MqttMode.External;
        if (embedded)
        {
            builder.AddSaitoMqttBroker();
        }

        builder.Services.AddHostedService<TryItReport>();
        configure?.Invoke(builder);

        var app = builder.Build();
        app.MapHealthChecks("/health");
        if (embedded)
        {
            app.MapSaitoMqttEndpoints();
        }

        return app;
    }
}

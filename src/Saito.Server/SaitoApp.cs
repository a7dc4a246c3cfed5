using Saito.Mqtt.Hosting;

namespace Saito.Server;

/// <summary>Saito's composition, shared by Program.cs and the tests (which start it on free ports).</summary>
public static class SaitoApp
{
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        var builder = WebApplication.CreateBuilder(args);
        builder.AddSaitoConfiguration();
        builder.AddSaitoMqttBroker();
        configure?.Invoke(builder);

        var app = builder.Build();
        app.MapHealthChecks("/health");
        app.MapSaitoMqttEndpoints();
        return app;
    }
}

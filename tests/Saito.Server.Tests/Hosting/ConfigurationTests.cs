using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Server.Tests.Hosting;

public sealed class ConfigurationTests
{
    [Theory]
    [InlineData("--Mqtt:Port=70000", "Port")]
    [InlineData("--Mqtt:TlsPort=18883", "Mqtt:CertificatePath")]
    [InlineData("--Mqtt:WebSocketPath=mqtt", "must start with '/'")]
    [InlineData("--Mqtt:MaxPacketSize=10", "MaxPacketSize")]
    [InlineData("--Mqtt:RequestClientCertificate=true", "Mqtt:ClientCaPath is not")]
    [InlineData("--Mqtt:StartupWaitSeconds=601", "StartupWaitSeconds")]
    [InlineData("--Mqtt:ConnectionSummarySeconds=0", "Mqtt:ConnectionSummarySeconds must be between 1 and 86400")]
    [InlineData("--Mqtt:ConnectionSummarySeconds=86401", "Mqtt:ConnectionSummarySeconds must be between 1 and 86400")]
    public async Task A_bad_setting_stops_the_server_at_start_with_a_message_that_names_it(string setting, string expected)
    {
        // Kestrel reads the MQTT options while the app is built, so a bad one stops Build() or, at the latest, StartAsync().
        var ex = await Should.ThrowAsync<OptionsValidationException>(async () =>
        {
            await using var app = SaitoApp.Build([$"--urls=http://127.0.0.1:{FreePort.Next()}", $"--Mqtt:Port={FreePort.Next()}", setting]);
            await app.StartAsync(TestContext.Current.CancellationToken);
        });
        ex.Message.ShouldContain(expected);
    }

    [Fact]
    public async Task Saito_environment_variables_sit_between_appsettings_and_the_command_line()
    {
        int fromEnvironment = FreePort.Next();
        int fromCommandLine = FreePort.Next();
        Environment.SetEnvironmentVariable("Saito__Mqtt__Port", fromEnvironment.ToString(System.Globalization.CultureInfo.InvariantCulture));
        Environment.SetEnvironmentVariable("Saito__Mqtt__MaxQueuedMessages", "1234");
        try
        {
            await using var app = SaitoApp.Build([$"--urls=http://127.0.0.1:{FreePort.Next()}", $"--Mqtt:Port={fromCommandLine}"]);
            var options = app.Services.GetRequiredService<IOptions<MqttBrokerOptions>>().Value;
            options.Port.ShouldBe(fromCommandLine, "the command line wins over the environment");
            options.MaxQueuedMessages.ShouldBe(1234, "the environment wins over appsettings.json and the defaults");
            options.BindAddress.ShouldBe("localhost", "appsettings.json still applies where nothing overrides it");
        }
        finally
        {
            Environment.SetEnvironmentVariable("Saito__Mqtt__Port", null);
            Environment.SetEnvironmentVariable("Saito__Mqtt__MaxQueuedMessages", null);
        }
    }

    [Fact]
    public async Task Health_answers_on_the_http_port_and_counts_clients()
    {
        await using var saito = await SaitoHost.StartAsync();
        // Storage reports Unhealthy ("preparing the database") until the schema is in place, which on a slow machine
        // can be after the HTTP port opens: ask once it is ready.
        await saito.Services.GetRequiredService<Saito.Ingestion.Pipeline.StorageStartup>().Ready
            .WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        await using var client = await RawMqttConnection.OpenAsync(saito.Endpoint, TestContext.Current.CancellationToken);
        (await client.ConnectAsync(Saito.Mqtt.Packets.MqttProtocolVersion.V500, "health-probe")).ReasonCode.ShouldBe((byte)0);
        using var http = new HttpClient();
        var body = await http.GetStringAsync($"http://127.0.0.1:{saito.HttpPort}/health", TestContext.Current.CancellationToken);
        using var health = System.Text.Json.JsonDocument.Parse(body);
        health.RootElement.GetProperty("status").GetString().ShouldBe("Healthy");
        var mqtt = health.RootElement.GetProperty("checks").GetProperty("mqtt");
        mqtt.GetProperty("data").GetProperty("connectedClients").GetInt32().ShouldBe(1);
        health.RootElement.GetProperty("checks").GetProperty("storage").GetProperty("status").GetString().ShouldBe("Healthy");
        saito.Broker.ConnectedClients.ShouldBe(1);
    }
}

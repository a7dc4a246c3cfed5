using System.Diagnostics;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.DependencyInjection;

namespace Saito.Server.Tests.Hosting;

/// <summary>Issue 32, items 4, 8 and 11 (c, d): the loopback promise, log injection, file modes and <c>--help</c>.</summary>
public sealed class HostHardeningTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task An_extra_Kestrel_endpoint_on_the_network_stops_Saito_at_start_while_anonymous_is_unset()
    {
        // The attack: --urls on 127.0.0.1 and Kestrel:Endpoints:Extra on 0.0.0.0; an anonymous WebSocket client from
        // another address then subscribed to saito/# and read every reading.
        await using var storage = new SqliteTestStorage();
        int extra = FreePort.Next();

        var refused = await Should.ThrowAsync<OptionsValidationException>(() => SaitoHost.StartAsync(storage, [$"Kestrel:Endpoints:Extra:Url=http://0.0.0.0:{extra}"]));

        refused.Message.ShouldContain("Mqtt:AllowAnonymous");
        refused.Message.ShouldContain("0.0.0.0");
        await AssertNothingListensAsync(extra);
    }

    [Fact]
    public async Task An_endpoint_bound_on_the_network_outside_the_configuration_stops_Saito_at_start()
    {
        // What Kestrel actually bound is checked after start, whatever added the endpoint.
        await using var storage = new SqliteTestStorage();
        int extra = FreePort.Next();

        var refused = await Should.ThrowAsync<OptionsValidationException>(() => SaitoHost.StartAsync(storage,
            configure: b => b.WebHost.ConfigureKestrel(k => k.ListenAnyIP(extra))));

        refused.Message.ShouldContain("Mqtt:AllowAnonymous");
        await AssertNothingListensAsync(extra);
    }

    [Fact]
    public async Task An_extra_endpoint_on_the_network_is_accepted_when_anonymous_is_refused()
    {
        await using var storage = new SqliteTestStorage();
        int extra = FreePort.Next();

        await using var saito = await SaitoHost.StartAsync(storage, [$"Kestrel:Endpoints:Extra:Url=http://0.0.0.0:{extra}", "Mqtt:AllowAnonymous=false"]);

        saito.Services.GetRequiredService<IOptions<Saito.Mqtt.Broker.MqttBrokerOptions>>().Value.LoopbackOnly.ShouldBeFalse();
    }

    /// <summary>From the machine's own non-loopback address when it has one (the attacker's side), else from loopback.</summary>
    private static async Task AssertNothingListensAsync(int port)
    {
        var address = System.Net.Dns.GetHostAddresses(System.Net.Dns.GetHostName())
            .FirstOrDefault(a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork && !System.Net.IPAddress.IsLoopback(a))
            ?? System.Net.IPAddress.Loopback;
        using var client = new System.Net.Sockets.TcpClient();
        await Should.ThrowAsync<System.Net.Sockets.SocketException>(() => client.ConnectAsync(address, port, Ct).AsTask());
    }

    [Fact]
    public async Task A_topic_with_a_newline_and_ESC_writes_no_forged_line_to_the_servers_log()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoServerProcess.StartAsync(new SaitoServerStart { Arguments = [.. storage.Settings.Select(s => "--" + s)] }, Ct);
        string topic = "saito/hub\nFORGED-LINE info: admin signed in\u001b[2J/d/biosensor";

        // A raw client: mosquitto_pub and paho refuse control characters in a topic, an attacker's own client does not.
        await using (var attacker = await RawMqttConnection.OpenAsync(new BrokerEndpoint("saito", "127.0.0.1", saito.Port, null, null, null), Ct))
        {
            await attacker.ConnectAsync(Saito.Mqtt.Packets.MqttProtocolVersion.V311, "log-forger");
            await attacker.SendAsync(new Saito.Mqtt.Packets.PublishPacket
            {
                Topic = topic, Payload = System.Text.Encoding.UTF8.GetBytes("not json"), QoS = Saito.Mqtt.Packets.MqttQoS.AtLeastOnce, PacketId = 1,
            });
            await attacker.ExpectAsync<Saito.Mqtt.Packets.PublishAckPacket>();
        }

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (!saito.Output.Contains("FORGED-LINE", StringComparison.Ordinal) && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50, Ct);
        }

        string output = saito.Output;
        output.ShouldContain("FORGED-LINE", customMessage: "the refused topic is logged");
        output.Split('\n').ShouldNotContain(line => line.TrimStart().StartsWith("FORGED-LINE", StringComparison.Ordinal));
        output.ShouldNotContain("\u001b[2J");
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")] // Unix file modes: the test runs on Linux
    public async Task Saito_makes_its_data_folder_0700_and_its_database_files_0600()
    {
        string data = Path.Combine(Directory.CreateTempSubdirectory("saito-modes-").FullName, "fresh");
        await using (var saito = await SaitoServerProcess.StartAsync(new SaitoServerStart { Arguments = [$"--Storage:DataPath={data}", "--Storage:Provider=sqlite"] }, Ct))
        {
            string hot = Path.Combine(data, "hot", "saito-hot.db");
            File.Exists(hot).ShouldBeTrue();
            File.GetUnixFileMode(data).ShouldBe(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            File.GetUnixFileMode(Path.Combine(data, "hot")).ShouldBe(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            foreach (string file in Directory.GetFiles(data, "*", SearchOption.AllDirectories))
            {
                File.GetUnixFileMode(file).ShouldBe(UnixFileMode.UserRead | UnixFileMode.UserWrite, file);
            }
        }

        Directory.Delete(Path.GetDirectoryName(data)!, recursive: true);
    }

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("help")]
    public async Task Help_prints_the_commands_and_exits_without_starting_a_server(string flag)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Saito.Server.dll"));
        psi.ArgumentList.Add(flag);
        using var process = Process.Start(psi)!;
        var output = process.StandardOutput.ReadToEndAsync(Ct);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Ct);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new Shouldly.ShouldAssertException($"'{flag}' started a server instead of printing help");
        }

        process.ExitCode.ShouldBe(0);
        string text = await output;
        foreach (string command in new[] { "hubs", "clients", "users", "registry", "README.md" })
        {
            text.ShouldContain(command);
        }
    }
}

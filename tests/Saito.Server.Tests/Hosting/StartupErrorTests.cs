using System.Net.Sockets;

namespace Saito.Server.Tests.Hosting;

/// <summary>What a user sees when Saito cannot start: one clear reason, a non-zero exit, no abort.</summary>
public sealed class StartupErrorTests
{
    [Fact]
    public async Task A_port_held_by_another_program_stops_the_start_with_exit_3_and_the_setting_to_change()
    {
        await using var storage = new SqliteTestStorage();
        using var holder = new TcpListener(IPAddress.Loopback, 0);
        holder.Start();
        int taken = ((IPEndPoint)holder.LocalEndpoint).Port;

        var failure = await Should.ThrowAsync<InvalidOperationException>(() => SaitoProcess.StartAsync(storage, taken));

        failure.Message.ShouldContain("exited with 3", customMessage: failure.Message);
        failure.Message.ShouldContain($"Saito cannot start: Failed to bind to address mqtt://127.0.0.1:{taken}: address already in use.");
        failure.Message.ShouldContain("--Mqtt:Port=N");
    }
}

using System.Text;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Server;

/// <summary>A hub that publishes while Saito is still preparing its database is served, not refused.</summary>
public sealed class StartupPublishTests
{
    [Fact]
    public async Task A_reading_from_a_new_device_published_before_the_tables_exist_waits_for_them_and_is_stored()
    {
        var token = TestContext.Current.CancellationToken;
        string hot = Directory.CreateTempSubdirectory("saito-startup-publish-").FullName;
        try
        {
            // Another connection holds the (empty) hot database, so Saito cannot create its tables until released.
            await using var held = await HeldDatabase.HoldFileAsync(Path.Combine(hot, "saito-hot.db"), token);

            await using var saito = await SaitoHost.StartAsync([$"Storage:HotPath={hot}", "Storage:CommandTimeoutSeconds=1"]);
            var ready = saito.Services.GetRequiredService<StorageStartup>().Ready;
            string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
            await using var hub = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
            (await hub.ConnectAsync(MqttProtocolVersion.V500, "hub-startup")).ReasonCode.ShouldBe((byte)0);
            await hub.SendAsync(new PublishPacket
            {
                Topic = $"saito/hub-1/{device}/biosensor",
                Payload = Encoding.UTF8.GetBytes($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"hr\":64}}"),
                QoS = MqttQoS.AtLeastOnce,
                PacketId = 3,
            });
            ready.IsCompleted.ShouldBeFalse("the database is held: Saito is still preparing it, which is the case under test");

            await held.ReleaseAsync(token);
            var ack = await hub.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(60));
            ack.PacketId.ShouldBe((ushort)3);
            ack.ReasonCode.ShouldBe(MqttReasonCode.Success);
            ready.IsCompletedSuccessfully.ShouldBeTrue();

            (await StoredReadings.BiosensorCountAsync(held.Connection, device, token)).ShouldBe(1);
        }
        finally
        {
            SqliteConnection.ClearAllPools();
            Directory.Delete(hot, recursive: true);
        }
    }
}

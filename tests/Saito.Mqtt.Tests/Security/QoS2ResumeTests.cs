using System.Text;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Security;

/// <summary>QoS 2 across a reconnect while the database is held down: the resent copy is acknowledged only once the data is safe.</summary>
public sealed class QoS2ResumeTests
{
    [Fact]
    public async Task A_dup_publish_on_a_resumed_session_gets_its_pubrec_only_after_the_first_copy_is_committed()
    {
        var token = TestContext.Current.CancellationToken;
        await using var saito = await SaitoHost.StartAsync(["Storage:CommandTimeoutSeconds=1"]);
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        string topic = $"saito/hub-1/{device}/biosensor";
        byte[] payload = Encoding.UTF8.GetBytes($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"hr\":71}}");

        await using var held = await HeldDatabase.HoldAsync(saito, token);

        string clientId = "qos2-" + device;
        var persistent = new MqttProperties { SessionExpiryInterval = 300 };
        await using (var first = await RawMqttConnection.OpenAsync(saito.Endpoint, token))
        {
            (await first.ConnectAsync(MqttProtocolVersion.V500, clientId, cleanStart: true, properties: persistent)).ReasonCode.ShouldBe((byte)0);
            await first.SendAsync(new PublishPacket { Topic = topic, Payload = payload, QoS = MqttQoS.ExactlyOnce, PacketId = 7 });
            await first.ExpectNothingAsync(TimeSpan.FromSeconds(1));
            first.Abort();
        }

        await using var second = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        (await second.ConnectAsync(MqttProtocolVersion.V500, clientId, cleanStart: false, properties: persistent)).SessionPresent.ShouldBeTrue();
        await second.SendAsync(new PublishPacket { Topic = topic, Payload = payload, QoS = MqttQoS.ExactlyOnce, PacketId = 7, Dup = true });
        await second.ExpectNothingAsync(TimeSpan.FromSeconds(1));

        await held.ReleaseAsync(token);
        var pubRec = await second.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(30));
        pubRec.Type.ShouldBe(MqttPacketType.PubRec);
        pubRec.PacketId.ShouldBe((ushort)7);
        pubRec.ReasonCode.ShouldBe(MqttReasonCode.Success);
        await second.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 7 });
        (await second.ExpectAsync<PublishAckPacket>()).Type.ShouldBe(MqttPacketType.PubComp);

        (await StoredReadings.BiosensorCountAsync(held.Connection, device, token)).ShouldBe(1, "stored once, before it was acknowledged");
    }
}

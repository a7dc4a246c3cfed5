using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Ingestion.Hosting;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// What a real broker does not show: the order acknowledgements leave in. External mode's client (MQTTnet's), against
/// a broker written byte by byte (MQTT 5.0).
/// </summary>
public sealed class ExternalBrokerClientTests
{
    [Fact]
    public async Task Acknowledgements_go_out_in_arrival_order_when_commits_finish_out_of_order()
    {
        var token = TestContext.Current.CancellationToken;
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        await using var client = new MqttNetExternalBrokerClient(new ExternalBrokerOptions { Host = "127.0.0.1", Port = port }, "order", NullLogger<MqttNetExternalBrokerClient>.Instance);

        var connecting = client.ConnectAsync(token);
        using var socket = await listener.AcceptSocketAsync(token);
        await using var stream = new NetworkStream(socket);
        (await ReadPacketAsync(stream, token)).Type.ShouldBe((byte)0x10);
        await stream.WriteAsync(new byte[] { 0x20, 0x03, 0x00, 0x00, 0x00 }, token); // CONNACK, success, no properties
        await connecting;

        var subscribing = client.SubscribeAsync("t", 1, token);
        var subscribe = await ReadPacketAsync(stream, token);
        subscribe.Type.ShouldBe((byte)0x82);
        await stream.WriteAsync(new byte[] { 0x90, 0x04, subscribe.Body[0], subscribe.Body[1], 0x00, 0x01 }, token); // SUBACK, QoS 1
        (await subscribing).Code.ShouldBe((byte)1);

        for (byte id = 1; id <= 3; id++)
        {
            // PUBLISH QoS 1 on "t", packet id `id`, no properties, payload "x"
            await stream.WriteAsync(new byte[] { 0x32, 0x07, 0x00, 0x01, (byte)'t', 0x00, id, 0x00, (byte)'x' }, token);
        }

        var messages = new List<ExternalBrokerMessage>();
        await foreach (var message in client.ReadMessagesAsync(token))
        {
            messages.Add(message);
            if (messages.Count == 3)
            {
                break;
            }
        }

        // The third and second are committed first: nothing may go out before the first's acknowledgement.
        var third = messages[2].AcknowledgeAsync().AsTask();
        var second = messages[1].AcknowledgeAsync().AsTask();
        using (var quiet = CancellationTokenSource.CreateLinkedTokenSource(token))
        {
            quiet.CancelAfter(TimeSpan.FromMilliseconds(500));
            await Should.ThrowAsync<OperationCanceledException>(() => ReadPacketAsync(stream, quiet.Token));
        }

        (await messages[0].AcknowledgeAsync()).ShouldBeTrue();
        (await second).ShouldBeTrue();
        (await third).ShouldBeTrue();
        var ids = new List<int>();
        for (int i = 0; i < 3; i++)
        {
            var ack = await ReadPacketAsync(stream, token);
            ack.Type.ShouldBe((byte)0x40);
            ids.Add((ack.Body[0] << 8) | ack.Body[1]);
        }

        ids.ShouldBe([1, 2, 3]);
    }

    private static async Task<(byte Type, byte[] Body)> ReadPacketAsync(NetworkStream stream, CancellationToken token)
    {
        var one = new byte[1];
        await stream.ReadExactlyAsync(one, token);
        byte type = one[0];
        int length = 0;
        for (int shift = 0; ; shift += 7)
        {
            await stream.ReadExactlyAsync(one, token);
            length |= (one[0] & 0x7F) << shift;
            if ((one[0] & 0x80) == 0)
            {
                break;
            }
        }

        var body = new byte[length];
        await stream.ReadExactlyAsync(body, token);
        return (type, body);
    }
}

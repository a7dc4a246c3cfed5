using System.Net.Sockets;

namespace Saito.Mqtt.Tests.Infrastructure;

[Collection(MosquittoCollection.Name)]
public sealed class MosquittoInstanceTests(MosquittoFixture mosquitto)
{
    [Fact]
    public async Task Mosquitto_accepts_tcp_connections_on_its_port()
    {
        using var client = new TcpClient();
        await client.ConnectAsync("127.0.0.1", mosquitto.Endpoint.Port, TestContext.Current.CancellationToken);
        client.Connected.ShouldBeTrue();
    }
}

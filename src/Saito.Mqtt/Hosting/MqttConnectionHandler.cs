using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Hosting;

/// <summary>Kestrel hands every TCP (and, after its TLS layer, every TLS) connection on an MQTT port to the broker.</summary>
public sealed class MqttConnectionHandler(MqttBroker broker) : ConnectionHandler
{
    public override Task OnConnectedAsync(ConnectionContext connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var tls = connection.Features.Get<ITlsConnectionFeature>();
        return broker.RunConnectionAsync(connection.Transport, new MqttConnectionInfo
        {
            Transport = tls is null ? "tcp" : "tls",
            RemoteEndPoint = connection.RemoteEndPoint,
            ClientCertificate = tls?.ClientCertificate,
            Abort = connection.Abort,
        });
    }
}

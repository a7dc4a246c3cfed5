using Microsoft.Extensions.Logging;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// The embedded broker's publish hook: every inbound PUBLISH goes through the ingestion pipeline, and its
/// PUBACK (QoS 1) or PUBREC (QoS 2) leaves only when the readings in it are committed. If Saito cannot commit
/// (shutting down, or the database unreachable until the connection closes), an MQTT 5.0 client gets a failure
/// reason code and a 3.1.1 client loses the connection without the acknowledgement, so both send it again.
/// </summary>
internal sealed partial class IngestionPublishHook(MessageIngestor ingestor, ILogger<IngestionPublishHook> logger) : IMqttPublishHook
{
    public async ValueTask<MqttPublishVerdict> OnPublishAsync(MqttInboundPublish publish, CancellationToken cancellationToken)
    {
        var message = new InboundMessage(publish.Topic, publish.Payload, publish.ClientId, publish.Properties?.ContentType, publish.ReceivedAt.UtcDateTime);
        try
        {
            await ingestor.IngestAsync(message, cancellationToken);
            return MqttPublishVerdict.Accepted;
        }
        catch (IngestionStoppedException)
        {
            return MqttPublishVerdict.Failed(MqttReasonCode.ImplementationSpecificError, "Saito is shutting down; send it again");
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            throw;
        }
        catch (Exception ex)
        {
            LogFailed(ex, publish.Topic, publish.ClientId);
            return MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError, "Saito could not store this message; send it again");
        }
    }

    [LoggerMessage(2201, LogLevel.Error, "Could not store a message on {Topic} from {ClientId}; not acknowledged")]
    private partial void LogFailed(Exception exception, string topic, string clientId);
}

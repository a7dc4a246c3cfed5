using System.Runtime.CompilerServices;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;

namespace Saito.Ingestion.Hosting;

/// <summary>External mode on Saito's own client (<c>Mqtt:External:Client=saito</c>): a thin wrapper.</summary>
internal sealed class SaitoExternalBrokerClient(MqttClientOptions options, ILogger<MqttClient> logger) : IExternalBrokerClient
{
    private readonly MqttClient _client = new(options, logger);

    public bool IsConnected => _client.IsConnected;

    public async IAsyncEnumerable<ExternalBrokerMessage> ReadMessagesAsync([EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await foreach (var message in _client.Messages.ReadAllAsync(cancellationToken))
        {
            yield return new Message(message);
        }
    }

    public async Task<bool> ConnectAsync(CancellationToken cancellationToken) => (await _client.ConnectAsync(cancellationToken)).SessionPresent;

    public async Task<(byte Code, string? Reason)> SubscribeAsync(string topicFilter, int qos, CancellationToken cancellationToken)
    {
        var result = await _client.SubscribeAsync(topicFilter, qos == 2 ? MqttQoS.ExactlyOnce : MqttQoS.AtLeastOnce, cancellationToken);
        return (result.ReasonCodes.Count > 0 ? (byte)result.ReasonCodes[0] : (byte)MqttReasonCode.UnspecifiedError, result.ReasonString);
    }

    public Task DisconnectAsync(CancellationToken cancellationToken) => _client.DisconnectAsync(cancellationToken);

    public ValueTask DisposeAsync() => _client.DisposeAsync();

    private sealed class Message(MqttReceivedMessage message) : ExternalBrokerMessage(message.Topic, message.Payload, message.Properties?.ContentType)
    {
        public override bool IsConnectionOpen => message.IsConnectionOpen;

        public override ValueTask<bool> AcknowledgeAsync() => message.AcknowledgeAsync();
    }
}

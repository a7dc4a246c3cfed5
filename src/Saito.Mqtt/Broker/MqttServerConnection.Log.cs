using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

internal sealed partial class MqttServerConnection
{
    private static partial class Log
    {
        // A line per connection at Debug: at Information the broker sums them up (ConnectionSummary, event 1029).
        [LoggerMessage(1000, LogLevel.Debug, "{ClientId} connected as {Identity} from {Remote} over {Transport}, MQTT {Version}, session present {SessionPresent}")]
        public static partial void Connected(ILogger logger, string clientId, string identity, string remote, string transport, MqttProtocolVersion version, bool sessionPresent);

        [LoggerMessage(1001, LogLevel.Debug, "{ClientId} disconnected ({Remote})")]
        public static partial void Disconnected(ILogger logger, string clientId, string remote);

        [LoggerMessage(1002, LogLevel.Warning, "Closed {Remote} (client '{ClientId}'): protocol violation {Reason}: {Detail}")]
        public static partial void ProtocolViolation(ILogger logger, string remote, string clientId, MqttReasonCode reason, string detail);

        [LoggerMessage(1003, LogLevel.Warning, "Closed {Remote}: unsupported protocol '{Protocol}' level {Level}")]
        public static partial void UnsupportedProtocol(ILogger logger, string remote, string protocol, byte level);

        // Warning for the first refusal and then at most once per 10 s, with the count; the others at Debug, so that a hub
        // with a wrong secret retrying all day, or a flood of bad CONNECTs, is seen without drowning the log.
        [LoggerMessage(EventId = 1004, Message = "Refused CONNECT of '{ClientId}' from {Remote}: {Why} ({Refused} CONNECTs refused since the last warning, {Total} in all)")]
        public static partial void ConnectRefused(ILogger logger, LogLevel level, string clientId, string remote, string why, long refused, long total);

        [LoggerMessage(1005, LogLevel.Debug, "Transport of {Remote} (client '{ClientId}') failed: {Detail}")]
        public static partial void TransportFailed(ILogger logger, string remote, string clientId, string detail);

        [LoggerMessage(1020, LogLevel.Error, "Connection of {Remote} (client '{ClientId}') ended by an unexpected error")]
        public static partial void Unexpected(ILogger logger, string remote, string clientId, Exception exception);

        [LoggerMessage(1006, LogLevel.Error, "Publish hook failed for {ClientId} on {Topic}")]
        public static partial void HookFailed(ILogger logger, string clientId, string topic, Exception exception);

        [LoggerMessage(1007, LogLevel.Warning, "Publish {PacketId} of {ClientId} not accepted: {Reason} {Detail}")]
        public static partial void PublishRefused(ILogger logger, string clientId, ushort packetId, MqttReasonCode reason, string? detail);

        [LoggerMessage(1008, LogLevel.Debug, "{ClientId} subscribed to {Filter}: 0x{Code:X2}")]
        public static partial void Subscribed(ILogger logger, string clientId, string filter, byte code);

        [LoggerMessage(1018, LogLevel.Warning, "Denied: {Identity} (client {ClientId}) may not publish to {Topic}")]
        public static partial void PublishDenied(ILogger logger, string identity, string clientId, string topic);

        [LoggerMessage(1025, LogLevel.Warning, "Denied: {Identity} (connection {Connection}) asked for client id {ClientId}, whose session belongs to another identity")]
        public static partial void SessionOfAnother(ILogger logger, string identity, string connection, string clientId);

        [LoggerMessage(1019, LogLevel.Warning, "Closed {Remote} (client {ClientId}): publish refused ({Reason}: {Detail}); MQTT 3.1.1 cannot say so otherwise")]
        public static partial void PublishRefusedClosed(ILogger logger, string remote, string clientId, MqttReasonCode reason, string detail);

        [LoggerMessage(1009, LogLevel.Warning, "Send loop of {Remote} (client '{ClientId}') did not finish in time while closing")]
        public static partial void SendStuck(ILogger logger, string remote, string clientId);
    }
}

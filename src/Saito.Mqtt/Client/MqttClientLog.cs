using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>The client's log lines. Event ids 2000-2999 belong to the client and never change meaning.</summary>
internal static partial class MqttClientLog
{
    [LoggerMessage(EventId = 2000, Level = LogLevel.Debug, Message = "Connecting to {Host}:{Port} (MQTT {Version}, TLS {Tls}) as '{ClientId}'")]
    public static partial void Connecting(ILogger logger, string host, int port, MqttProtocolVersion version, bool tls, string clientId);

    [LoggerMessage(EventId = 2001, Level = LogLevel.Information, Message = "Connected to {Host}:{Port} as '{ClientId}' (session present: {SessionPresent})")]
    public static partial void Connected(ILogger logger, string host, int port, string clientId, bool sessionPresent);

    [LoggerMessage(EventId = 2002, Level = LogLevel.Warning, Message = "Connection to {Host}:{Port} failed")]
    public static partial void ConnectFailed(ILogger logger, string host, int port, Exception exception);

    [LoggerMessage(EventId = 2003, Level = LogLevel.Warning, Message = "Connection to {Host}:{Port} lost; reconnecting: {WillReconnect}")]
    public static partial void ConnectionLost(ILogger logger, string host, int port, bool willReconnect, Exception? exception);

    [LoggerMessage(EventId = 2004, Level = LogLevel.Information, Message = "Reconnect attempt {Attempt} to {Host}:{Port} in {Delay}")]
    public static partial void ReconnectScheduled(ILogger logger, int attempt, string host, int port, TimeSpan delay);

    [LoggerMessage(EventId = 2006, Level = LogLevel.Information, Message = "Reconnected to {Host}:{Port} after {Attempts} attempt(s) (session present: {SessionPresent})")]
    public static partial void Reconnected(ILogger logger, string host, int port, int attempts, bool sessionPresent);

    [LoggerMessage(EventId = 2007, Level = LogLevel.Information, Message = "Resubscribed {Count} topic filter(s) after the broker lost the session")]
    public static partial void Resubscribed(ILogger logger, int count);

    [LoggerMessage(EventId = 2008, Level = LogLevel.Warning, Message = "Resubscribing after reconnect failed")]
    public static partial void ResubscribeFailed(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 2009, Level = LogLevel.Warning, Message = "The broker refused resubscription to '{TopicFilter}' with 0x{ReasonCode:X2}")]
    public static partial void ResubscribeRefused(ILogger logger, string topicFilter, byte reasonCode);

    [LoggerMessage(EventId = 2010, Level = LogLevel.Information, Message = "Resent {Publishes} unacknowledged PUBLISH and {Releases} PUBREL on the new connection")]
    public static partial void ResentInflight(ILogger logger, int publishes, int releases);

    [LoggerMessage(EventId = 2011, Level = LogLevel.Information, Message = "Disconnected from {Host}:{Port} at the application's request")]
    public static partial void Disconnected(ILogger logger, string host, int port);

    [LoggerMessage(EventId = 2012, Level = LogLevel.Warning, Message = "No PINGRESP within {Timeout}: the connection is considered dead")]
    public static partial void PingTimeout(ILogger logger, TimeSpan timeout);

    [LoggerMessage(EventId = 2013, Level = LogLevel.Debug, Message = "PINGRESP received")]
    public static partial void PingResponse(ILogger logger);

    [LoggerMessage(EventId = 2014, Level = LogLevel.Debug, Message = "Acknowledgement of packet {PacketId} on '{Topic}' not sent: its connection has closed and the broker will redeliver it")]
    public static partial void StaleAcknowledgement(ILogger logger, ushort packetId, string topic);

    [LoggerMessage(EventId = 2015, Level = LogLevel.Debug, Message = "Duplicate QoS 2 PUBLISH {PacketId} not delivered again")]
    public static partial void DuplicateQoS2(ILogger logger, ushort packetId);

    [LoggerMessage(EventId = 2016, Level = LogLevel.Error, Message = "A {Event} event handler threw")]
    public static partial void EventHandlerFailed(ILogger logger, string @event, Exception exception);

    [LoggerMessage(EventId = 2017, Level = LogLevel.Warning, Message = "Protocol violation by the broker: {Reason}")]
    public static partial void ProtocolViolation(ILogger logger, string reason);

    [LoggerMessage(EventId = 2018, Level = LogLevel.Debug, Message = "{PacketType} for unknown packet identifier {PacketId} ignored")]
    public static partial void UnknownPacketId(ILogger logger, MqttPacketType packetType, ushort packetId);

    [LoggerMessage(EventId = 2019, Level = LogLevel.Debug, Message = "Inbound flow paused: {Reason}")]
    public static partial void InboundPaused(ILogger logger, string reason);

    [LoggerMessage(EventId = 2020, Level = LogLevel.Warning, Message = "Closing the connection failed")]
    public static partial void CloseFailed(ILogger logger, Exception exception);
}

using Microsoft.Extensions.Logging;

namespace Saito.Mqtt.Broker;

// The broker's own log lines; a connection's are in MqttServerConnection.Log.cs, a session's in MqttSessionStore.cs.
public sealed partial class MqttBroker
{
    [LoggerMessage(1024, LogLevel.Warning,
        "Retained message on {Topic} not kept: Mqtt:{Limit} ({LimitValue}) reached; {NotKept} not kept since the last report, {Total} in all. " +
        "They were still delivered to current subscribers and acknowledged; later subscribers get the topic's previous retained message, if it had one")]
    private partial void LogRetainedNotKept(string topic, string limit, long limitValue, long notKept, long total);

    [LoggerMessage(1012, LogLevel.Warning,
        "Queue of {ClientId} is full (Mqtt:MaxQueuedMessages {Limit}, Mqtt:MaxQueuedBytesPerSession {LimitBytes}): {Dropped} new messages for it dropped since the last report, {Total} in all; it reads slower than messages arrive")]
    private partial void LogQueueFull(string clientId, int limit, long limitBytes, long dropped, long total);

    [LoggerMessage(1021, LogLevel.Information, "MQTT connections are served now: start-up work ({Work}) done after {Milliseconds} ms")]
    private partial void LogGatesOpened(string work, long milliseconds);

    [LoggerMessage(1022, LogLevel.Warning,
        "MQTT connections are served now although start-up work ({Work}) is not done after {Seconds} s (Mqtt:StartupWaitSeconds)")]
    private partial void LogGatesTimedOut(string work, int seconds);

    [LoggerMessage(1023, LogLevel.Error, "Waiting for start-up work ({Work}) failed; MQTT connections are served now")]
    private partial void LogGateFailed(Exception exception, string work);

    [LoggerMessage(1013, LogLevel.Debug, "Connection from {Remote} sent no CONNECT in time; closed")]
    private partial void LogConnectTimeout(string? remote);

    [LoggerMessage(1014, LogLevel.Debug, "{ClientId} silent for 1.5 x its keep-alive of {KeepAlive} s; closed")]
    private partial void LogKeepAliveTimeout(string clientId, long keepAlive);

    [LoggerMessage(1017, LogLevel.Warning, "Denied: {Identity} (client {ClientId}) may not subscribe to {Filter}")]
    private partial void LogSubscribeDenied(string identity, string clientId, string filter);

    [LoggerMessage(1027, LogLevel.Warning,
        "Connection from {Remote} (client '{ClientId}') did not finish a packet within {Seconds} s (Mqtt:PacketReadTimeoutSeconds); closed. " +
        "{Closed} closed since the last report, {Total} in all")]
    private partial void LogPacketTimeout(string remote, string clientId, int seconds, long closed, long total);

    [LoggerMessage(1028, LogLevel.Warning,
        "Connection from {Remote} (client '{ClientId}') closed: its packet, unfinished the longest, held {Bytes} bytes while packets not yet received " +
        "whole held more than Mqtt:MaxUnfinishedPacketBytes ({Limit}); {Closed} closed since the last report, {Total} in all")]
    private partial void LogUnfinishedShed(string remote, string clientId, long bytes, long limit, long closed, long total);

    [LoggerMessage(1026, LogLevel.Warning,
        "Connection from {Remote}, which sent no CONNECT yet, closed for a newer one: Mqtt:{Limit} reached ({Evicted} closed so far, logged one in a thousand)")]
    private partial void LogPendingEvicted(string remote, string limit, long evicted);

    [LoggerMessage(1016, LogLevel.Warning, "Connection from {Remote} closed at once: {Limit} reached ({Refused} refused so far)")]
    private partial void LogAdmissionRefused(string remote, string limit, long refused);

    [LoggerMessage(1029, LogLevel.Information,
        "MQTT connections in the last {Seconds} s: {Connected} connected, {Disconnected} disconnected ({TakenOver} taken over by a newer connection), " +
        "{Refused} refused ({RefusedByReason}); {Open} open now")]
    private partial void LogConnectionSummary(int seconds, long connected, long disconnected, long takenOver, long refused, string refusedByReason, long open);
}

using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// Wills: when a client's will goes out at once, when it waits for its delay (5.0) on the disconnected session, and
/// publishing the ones due. The rules are called by <see cref="MqttSessionStore"/> under its lock; the wills they
/// give back are published here after that lock is released.
/// </summary>
internal sealed partial class MqttWills(MqttBroker broker, ILogger logger)
{
    private readonly ILogger _logger = logger;

    /// <summary>A session was taken over: the old connection's will goes out unless a delay lets the new connection cancel it.</summary>
    public static bool GoesOutOnTakeover(MqttWill will) => (will.Properties?.WillDelayInterval ?? 0) == 0;

    /// <summary>
    /// A connection closed and its session lives on: a will with a delay waits on the session (at most until the session
    /// expires) and true is returned; false means it goes out now.
    /// </summary>
    public static bool Hold(MqttSession session, MqttWill will, long now)
    {
        uint willDelay = will.Properties?.WillDelayInterval ?? 0;
        if (willDelay == 0)
        {
            return false;
        }

        session.DelayedWill = will;
        session.DelayedWillAt = now + (Math.Min(willDelay, session.ExpiryInterval) * 1000L);
        return true;
    }

    /// <summary>Reconnecting inside the will delay cancels the will [MQTT-3.1.3-9].</summary>
    public static void Cancel(MqttSession session) => session.DelayedWill = null;

    /// <summary>Takes the waiting will off the session: it must go out now (its session ends).</summary>
    public static MqttWill? Take(MqttSession session)
    {
        var will = session.DelayedWill;
        session.DelayedWill = null;
        return will;
    }

    /// <summary>Takes the waiting will off a disconnected session when its delay is over.</summary>
    public static MqttWill? TakeDue(MqttSession session, long now) =>
        session.DelayedWill is not null && now >= session.DelayedWillAt ? Take(session) : null;

    /// <summary>Publishes wills as messages from nobody (no-local does not apply), without their will delay.</summary>
    public void Publish(List<MqttWill>? wills)
    {
        if (wills is null)
        {
            return;
        }

        long now = Environment.TickCount64;
        foreach (var will in wills)
        {
            var properties = will.Properties;
            if (properties?.WillDelayInterval is not null)
            {
                properties = properties.Clone();
                properties.WillDelayInterval = null;
            }

            LogWillPublished(will.Topic);
            broker.Route(MqttMessage.Create(will.Topic, will.Payload, will.QoS, will.Retain, properties, sender: null, now), now);
        }
    }

    [LoggerMessage(1011, LogLevel.Debug, "Will published to {Topic}")]
    private partial void LogWillPublished(string topic);
}

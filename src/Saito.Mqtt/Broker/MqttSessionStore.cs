using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The sessions by client id, bounded by <see cref="MqttBrokerOptions.MaxSessions"/>: attaching a connection (a new
/// session, or taking one over), detaching it when it closes, and ending sessions (their subscriptions leave the
/// tree). Each call hands back the wills that must now go out (<see cref="MqttWills"/>), for the caller to publish
/// outside the lock.
/// </summary>
internal sealed partial class MqttSessionStore(MqttBrokerOptions options, MqttBrokerMetrics metrics, SubscriptionTree tree, ILogger logger)
{
    private readonly Dictionary<string, MqttSession> _sessions = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();
    private readonly ILogger _logger = logger;

    /// <summary>Sessions kept (connected or waiting for their client).</summary>
    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _sessions.Count;
            }
        }
    }

    /// <summary>The queue of one session (see <see cref="MqttBroker.QueueOf"/>).</summary>
    public (int Messages, long Bytes, long Dropped)? QueueOf(string clientId)
    {
        MqttSession? session;
        lock (_lock)
        {
            _sessions.TryGetValue(clientId, out session);
        }

        if (session is null)
        {
            return null;
        }

        lock (session.Sync)
        {
            return (session.QueuedCount, session.QueuedBytes, session.Dropped);
        }
    }

    /// <summary>Messages dropped for each kept session whose queue has overflowed, by client id (for <c>saito.mqtt.subscriber.dropped</c>).</summary>
    public List<(string ClientId, long Dropped)> Drops()
    {
        var drops = new List<(string, long)>();
        lock (_lock)
        {
            foreach (var session in _sessions.Values)
            {
                // Read without the session's lock (a 64-bit read is atomic; a count a moment old is fine for a metric).
                if (session.Dropped is > 0 and long dropped)
                {
                    drops.Add((session.ClientId, dropped));
                }
            }
        }

        return drops;
    }

    /// <summary>
    /// Gives the connection its session: a new one, or the existing one (taking it over from an older connection, which is
    /// closed). Null when a new session is needed and <see cref="MqttBrokerOptions.MaxSessions"/> are kept already, or
    /// (<paramref name="ownedByAnother"/>) when the client id's session belongs to another identity.
    /// </summary>
    public (MqttSession Session, bool Present)? Attach(MqttServerConnection connection, string clientId, bool cleanStart, uint expiry,
        out List<MqttWill>? willsToPublish, out bool ownedByAnother)
    {
        MqttServerConnection? previous = null;
        MqttSession? session;
        bool present;
        willsToPublish = null;
        ownedByAnother = false;
        string owner = connection.Identity.Name;
        lock (_lock)
        {
            _sessions.TryGetValue(clientId, out session);
            if (session is not null && !string.Equals(session.Owner, owner, StringComparison.Ordinal))
            {
                // Another identity's client id: neither its connection nor its session (subscriptions, queue) is touched.
                ownedByAnother = true;
                return null;
            }

            if (session is null && _sessions.Count >= options.MaxSessions)
            {
                metrics.LimitHit(nameof(MqttBrokerOptions.MaxSessions));
                return null;
            }

            if (session?.Connection is { } old && !ReferenceEquals(old, connection))
            {
                previous = old;
                session.Connection = null;
            }

            if (session is not null && (cleanStart || session.ExpiresAt is { } at && Environment.TickCount64 >= at))
            {
                if (DiscardLocked(session) is { } will)
                {
                    (willsToPublish ??= []).Add(will);
                }

                session = null;
            }

            present = session is not null;
            if (session is null)
            {
                session = new MqttSession(clientId, owner);
                _sessions[clientId] = session;
            }
            else
            {
                MqttWills.Cancel(session);
            }

            session.ExpiresAt = null;
            session.ExpiryInterval = expiry;
            session.Connection = connection;
        }

        if (previous is not null)
        {
            LogSessionTakenOver(clientId);
            previous.Close(MqttReasonCode.SessionTakenOver, takenOver: true);
        }

        return (session, present);
    }

    /// <summary>
    /// The connection of <paramref name="session"/> ended; <paramref name="will"/> is its will when one must be published.
    /// A session with no expiry ends here; another waits for its client (its will may wait for its delay).
    /// </summary>
    public List<MqttWill>? Detach(MqttSession session, MqttServerConnection connection, MqttWill? will)
    {
        List<MqttWill>? willsToPublish = null;
        lock (_lock)
        {
            if (!ReferenceEquals(session.Connection, connection))
            {
                // Taken over: the session lives on with the new connection.
                if (will is not null && MqttWills.GoesOutOnTakeover(will))
                {
                    (willsToPublish ??= []).Add(will);
                }
            }
            else
            {
                session.Connection = null;
                if (session.ExpiryInterval == 0)
                {
                    DiscardLocked(session);
                    _sessions.Remove(session.ClientId);
                    if (will is not null)
                    {
                        (willsToPublish ??= []).Add(will);
                    }
                }
                else
                {
                    long now = Environment.TickCount64;
                    session.ExpiresAt = session.ExpiryInterval == uint.MaxValue ? null : now + (session.ExpiryInterval * 1000L);
                    if (will is not null && !MqttWills.Hold(session, will, now))
                    {
                        (willsToPublish ??= []).Add(will);
                    }
                }
            }
        }

        return willsToPublish;
    }

    /// <summary>Ends the disconnected sessions that have expired; returns their wills and the delayed wills now due.</summary>
    public List<MqttWill>? Expire(long now)
    {
        List<MqttWill>? wills = null;
        lock (_lock)
        {
            List<MqttSession>? expired = null;
            foreach (var session in _sessions.Values)
            {
                if (session.Connection is not null)
                {
                    continue;
                }

                if (MqttWills.TakeDue(session, now) is { } will)
                {
                    (wills ??= []).Add(will);
                }

                if (session.ExpiresAt is { } at && now >= at)
                {
                    (expired ??= []).Add(session);
                }
            }

            if (expired is not null)
            {
                foreach (var session in expired)
                {
                    if (DiscardLocked(session) is { } will)
                    {
                        (wills ??= []).Add(will);
                    }

                    _sessions.Remove(session.ClientId);
                    LogSessionExpired(session.ClientId);
                }
            }
        }

        return wills;
    }

    /// <summary>Ends a session: its subscriptions leave the tree. Returns a delayed will that must now go out. Call under the lock.</summary>
    private MqttWill? DiscardLocked(MqttSession session)
    {
        lock (session.Sync)
        {
            foreach (var subscription in session.SubscriptionList)
            {
                tree.Remove(subscription.Filter, subscription.ShareGroup, session);
            }

            session.ClearState();
        }

        return MqttWills.Take(session);
    }

    [LoggerMessage(1010, LogLevel.Debug, "Session of {ClientId} taken over by a new connection")]
    private partial void LogSessionTakenOver(string clientId);

    [LoggerMessage(1015, LogLevel.Debug, "Session of {ClientId} expired")]
    private partial void LogSessionExpired(string clientId);
}

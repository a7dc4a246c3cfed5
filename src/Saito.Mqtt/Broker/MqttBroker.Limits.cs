using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Net;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// The limits that guard the broker before and around CONNECT: connections per address, the pending (no CONNECT yet)
// budgets, and the bytes and time an unfinished packet may hold; each closes the connections it must and reports it
// without flooding the log.
public sealed partial class MqttBroker
{
    private readonly ConcurrentDictionary<IPAddress, int> _connectionsPerAddress = new();
    private readonly PendingConnections _pending;
    private long _pendingEvicted;
    private long _admissionsRefused;

    // Bytes held by unfinished packets (Mqtt:MaxUnfinishedPacketBytes), those of connections being closed for it, and reports.
    private long _unfinishedBytes;
    private long _unfinishedShed;
    private long _unfinishedClosed;
    private readonly Lock _shedLock = new();
    private readonly ReportThrottle _unfinishedReports = new(DropLogInterval);

    // Connections closed for Mqtt:PacketReadTimeoutSeconds (counted by housekeeping only), and reports.
    private long _packetTimeouts;
    private readonly ReportThrottle _packetTimeoutReports = new(DropLogInterval);

    /// <summary>A pending budget was full: its oldest connection, which has still sent no CONNECT, is closed at once.</summary>
    private void Evict(MqttServerConnection oldest, string limit)
    {
        Metrics.LimitHit(limit);

        // A flood must not become a flood of log lines: the first, then one in a thousand.
        long evicted = Interlocked.Increment(ref _pendingEvicted);
        if (evicted % 1000 == 1)
        {
            LogPendingEvicted(oldest.Info.RemoteEndPoint?.ToString() ?? oldest.Info.Transport, limit, evicted);
        }

        oldest.CancelNow();
    }

    /// <summary>Over a limit before a byte is read: close at once; nothing is parsed, nothing is held.</summary>
    private async Task RefuseAdmissionAsync(IDuplexPipe transport, MqttConnectionInfo info, string limit)
    {
        Metrics.LimitHit(limit);
        Connections.Refused(limit);

        // A flood of refused connections must not become a flood of log lines: the first, then one in a thousand.
        if (Interlocked.Increment(ref _admissionsRefused) % 1000 == 1)
        {
            LogAdmissionRefused(info.RemoteEndPoint?.ToString() ?? info.Transport, limit, _admissionsRefused);
        }

        await transport.Input.CompleteAsync();
        await transport.Output.CompleteAsync();
        info.Ended?.Invoke();
    }

    /// <summary>
    /// <paramref name="connection"/>'s unfinished packet holds <paramref name="change"/> bytes more (or fewer). Past
    /// <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/> in all, the connections whose packets have been unfinished
    /// longest are closed until the rest fit (the largest first among packets begun at the same time). A packet from a
    /// hub arrives in milliseconds, so it is never the oldest while a flood of slow packets holds the budget, however large
    /// it is; to stay younger than a hub's packet, a flood would have to send the whole budget again every few milliseconds.
    /// </summary>
    internal void HoldUnfinished(MqttServerConnection connection, long change)
    {
        long held = Interlocked.Add(ref _unfinishedBytes, change);
        if (change > 0 && held - Volatile.Read(ref _unfinishedShed) > Options.MaxUnfinishedPacketBytes)
        {
            ShedUnfinished(connection);
        }
    }

    /// <summary>Bytes held by packets not yet received whole (as counted for <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/>).</summary>
    internal long UnfinishedPacketBytes => Volatile.Read(ref _unfinishedBytes);

    private void ShedUnfinished(MqttServerConnection grown)
    {
        // Rare (only past the budget): one at a time, a scan of the connections for the oldest unfinished packet.
        lock (_shedLock)
        {
            while (Volatile.Read(ref _unfinishedBytes) - _unfinishedShed > Options.MaxUnfinishedPacketBytes)
            {
                MqttServerConnection? oldest = grown.ShedBytes == 0 && grown.UnfinishedCounted > 0 ? grown : null;
                foreach (var candidate in _connections.Keys)
                {
                    if (candidate.ShedBytes == 0 && candidate.UnfinishedCounted > 0 && (oldest is null || OlderOrLarger(candidate, oldest)))
                    {
                        oldest = candidate;
                    }
                }

                if (oldest is null)
                {
                    return;
                }

                oldest.ShedBytes = Math.Max(1, oldest.UnfinishedCounted);
                Volatile.Write(ref _unfinishedShed, _unfinishedShed + oldest.ShedBytes);
                Metrics.LimitHit(nameof(MqttBrokerOptions.MaxUnfinishedPacketBytes));
                long shed = Interlocked.Increment(ref _unfinishedClosed);
                if (_unfinishedReports.Due(shed) is > 0 and var since)
                {
                    LogUnfinishedShed(oldest.Info.RemoteEndPoint?.ToString() ?? oldest.Info.Transport, LogText.Safe(oldest.ClientId),
                        oldest.UnfinishedCounted, Options.MaxUnfinishedPacketBytes, since, shed);
                }

                oldest.Close(MqttReasonCode.QuotaExceeded);
            }
        }
    }

    private static bool OlderOrLarger(MqttServerConnection candidate, MqttServerConnection chosen) =>
        candidate.UnfinishedSince < chosen.UnfinishedSince
        || (candidate.UnfinishedSince == chosen.UnfinishedSince && candidate.UnfinishedCounted > chosen.UnfinishedCounted);

    /// <summary>A connection admitted by <see cref="RunConnectionAsync"/> has ended: it no longer counts against the limits.</summary>
    internal void Released(MqttServerConnection connection, IPAddress? network)
    {
        if (connection.UnfinishedCounted != 0 || connection.ShedBytes != 0)
        {
            // Under the shedding lock, so a scan going on cannot pick this connection after it has given its bytes back.
            lock (_shedLock)
            {
                Interlocked.Add(ref _unfinishedBytes, -connection.UnfinishedCounted);
                Volatile.Write(ref _unfinishedShed, _unfinishedShed - connection.ShedBytes);
                connection.ForgetUnfinished();
            }
        }

        _pending.Leave(connection);
        Release(network);
        connection.Info.Ended?.Invoke();
    }

    private static IPAddress? AddressOf(EndPoint? endPoint) => endPoint is IPEndPoint ip
        ? ip.Address.IsIPv4MappedToIPv6 ? ip.Address.MapToIPv4() : ip.Address
        : null;

    /// <summary>Counts one more connection from <paramref name="network"/>; false (and not counted) past <see cref="MqttBrokerOptions.MaxConnectionsPerAddress"/>.</summary>
    private bool TryAdmit(IPAddress? network)
    {
        if (network is not null && _connectionsPerAddress.AddOrUpdate(network, 1, static (_, n) => n + 1) > Options.MaxConnectionsPerAddress)
        {
            Release(network);
            return false;
        }

        return true;
    }

    private void Release(IPAddress? address)
    {
        if (address is null)
        {
            return;
        }

        while (_connectionsPerAddress.TryGetValue(address, out int count))
        {
            bool done = count <= 1
                ? _connectionsPerAddress.TryRemove(new KeyValuePair<IPAddress, int>(address, count))
                : _connectionsPerAddress.TryUpdate(address, count - 1, count);
            if (done)
            {
                return;
            }
        }
    }

    /// <summary>A connection sent CONNECT: it no longer counts as pending.</summary>
    internal void LeftPending(MqttServerConnection connection) => _pending.Leave(connection);

    /// <summary>A packet begun and not finished in time: its sender trickles or stopped, and holds what it sent so far.</summary>
    private void ClosePacketTimedOut(MqttServerConnection connection)
    {
        Metrics.LimitHit(nameof(MqttBrokerOptions.PacketReadTimeoutSeconds));
        if (_packetTimeoutReports.Due(++_packetTimeouts) is > 0 and var closed)
        {
            LogPacketTimeout(connection.Info.RemoteEndPoint?.ToString() ?? connection.Info.Transport, LogText.Safe(connection.ClientId),
                Options.PacketReadTimeoutSeconds, closed, _packetTimeouts);
        }

        connection.Close(MqttReasonCode.KeepAliveTimeout);
    }
}

using System.Net;
using System.Net.Sockets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// Connections that have not sent CONNECT yet, oldest first: all of them (<see cref="MqttBrokerOptions.MaxPendingConnections"/>)
/// and per network (<see cref="MqttBrokerOptions.MaxPendingConnectionsPerAddress"/>, an IPv4 address or an IPv6 /64).
/// A new connection is always taken in; when a budget is full the oldest connection under that budget is closed for it.
/// <para>
/// Why evict rather than refuse (issue 32): refusing the newest let one address that opened 1,000 silent connections
/// and re-opened them as they timed out hold the whole global budget, so every hub reconnecting was closed at once.
/// Evicting the oldest gives every new connection the time it takes the flood to open a budget's worth of connections
/// after it, which a hub that sends CONNECT at once always has; and the per-network budget makes a flood from one
/// network evict only its own connections, so it cannot touch another network's at all until the global budget is full.
/// An IPv6 client usually holds a whole /64, hence the key.
/// </para>
/// Only connection set-up and CONNECT take the lock; the publish path never does.
/// </summary>
internal sealed class PendingConnections(int max, int maxPerNetwork)
{
    private readonly Lock _lock = new();
    private readonly LinkedList<MqttServerConnection> _all = new();
    private readonly Dictionary<IPAddress, LinkedList<MqttServerConnection>> _byNetwork = [];
    private int _count;

    public int Count => Volatile.Read(ref _count);

    /// <summary>The key an address counts under: an IPv4 address itself, an IPv6 address's /64 prefix.</summary>
    public static IPAddress? NetworkOf(IPAddress? address)
    {
        if (address is null || address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address;
        }

        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes[8..].Clear();
        return new IPAddress(bytes);
    }

    /// <summary>
    /// Takes in <paramref name="connection"/> (from <paramref name="network"/>, see <see cref="NetworkOf"/>); returns the
    /// connection it displaces, which the caller closes, and the budget that was full.
    /// </summary>
    public MqttServerConnection? Enter(MqttServerConnection connection, IPAddress? network, out string? limit)
    {
        MqttServerConnection? evicted = null;
        limit = null;
        lock (_lock)
        {
            LinkedList<MqttServerConnection>? mine = null;
            if (network is not null && !_byNetwork.TryGetValue(network, out mine))
            {
                _byNetwork[network] = mine = new LinkedList<MqttServerConnection>();
            }

            if (mine is not null && mine.Count >= maxPerNetwork)
            {
                evicted = mine.First!.Value;
                limit = nameof(MqttBrokerOptions.MaxPendingConnectionsPerAddress);
            }
            else if (_all.Count >= max)
            {
                evicted = _all.First!.Value;
                limit = nameof(MqttBrokerOptions.MaxPendingConnections);
            }

            if (evicted is not null)
            {
                RemoveLocked(evicted);
                if (mine is { Count: 0 })
                {
                    // The evicted connection was the network's last one (a budget of one): its list went with it.
                    _byNetwork[network!] = mine;
                }
            }

            connection.PendingNode = _all.AddLast(connection);
            connection.PendingNetworkNode = mine?.AddLast(connection);
            connection.PendingNetwork = network;
            _count = _all.Count;
        }

        return evicted;
    }

    /// <summary>The connection sent CONNECT, or ended: it no longer counts. False when it had left already (or was evicted).</summary>
    public bool Leave(MqttServerConnection connection)
    {
        if (connection.PendingNode is null)
        {
            return false;
        }

        lock (_lock)
        {
            if (connection.PendingNode is null)
            {
                return false;
            }

            RemoveLocked(connection);
            _count = _all.Count;
            return true;
        }
    }

    private void RemoveLocked(MqttServerConnection connection)
    {
        _all.Remove(connection.PendingNode!);
        connection.PendingNode = null;
        if (connection.PendingNetworkNode is { List: { } list } node)
        {
            list.Remove(node);
            if (list.Count == 0)
            {
                _byNetwork.Remove(connection.PendingNetwork!);
            }
        }

        connection.PendingNetworkNode = null;
        connection.PendingNetwork = null;
    }
}

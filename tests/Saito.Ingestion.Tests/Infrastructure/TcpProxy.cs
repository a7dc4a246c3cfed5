using System.Net;
using System.Net.Sockets;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// A loopback TCP forwarder between Saito and a database server, which a test can cut (every connection dropped,
/// new ones refused) and restore: a database that goes away and comes back, as a network or a restart does.
/// </summary>
public sealed class TcpProxy : IAsyncDisposable
{
    private readonly IPEndPoint _target;
    private readonly object _lock = new();
    private readonly List<TcpClient> _connections = [];
    private readonly CancellationTokenSource _stop = new();
    private TcpListener? _listener;
    private Task? _acceptLoop;

    public TcpProxy(IPEndPoint target)
    {
        _target = target;
        Port = FreePort.Next();
    }

    public int Port { get; }

    /// <summary>A started proxy in front of a PostgreSQL database, and the connection string through it (short timeouts).</summary>
    public static async Task<(TcpProxy Proxy, string ConnectionString)> ForPostgresAsync(string connectionString, CancellationToken cancellationToken)
    {
        var server = new Npgsql.NpgsqlConnectionStringBuilder(connectionString);
        var address = (await Dns.GetHostAddressesAsync(server.Host!, cancellationToken)).First(a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork);
        var proxy = new TcpProxy(new IPEndPoint(address, server.Port));
        proxy.Start();
        var through = new Npgsql.NpgsqlConnectionStringBuilder(connectionString) { Host = "127.0.0.1", Port = proxy.Port, Timeout = 3, CommandTimeout = 5 };
        return (proxy, through.ConnectionString);
    }

    public void Start()
    {
        lock (_lock)
        {
            if (_listener is not null)
            {
                return;
            }

            _listener = new TcpListener(IPAddress.Loopback, Port);
            _listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            _listener.Start();
            var listener = _listener;
            _acceptLoop = Task.Run(() => AcceptAsync(listener));
        }
    }

    /// <summary>Drops every forwarded connection and refuses new ones until <see cref="Start"/>.</summary>
    public void Cut()
    {
        lock (_lock)
        {
            _listener?.Stop();
            _listener = null;
            foreach (var connection in _connections)
            {
                try
                {
                    // RST rather than FIN: the database side of a pulled cable says nothing.
                    connection.Client?.LingerState = new LingerOption(true, 0);
                }
                catch (ObjectDisposedException)
                {
                }

                connection.Dispose();
            }

            _connections.Clear();
        }
    }

    public async ValueTask DisposeAsync()
    {
        Cut();
        await _stop.CancelAsync();
        if (_acceptLoop is not null)
        {
            await _acceptLoop.ContinueWith(_ => { }, TaskScheduler.Default);
        }

        _stop.Dispose();
    }

    private async Task AcceptAsync(TcpListener listener)
    {
        while (!_stop.IsCancellationRequested)
        {
            TcpClient inbound;
            try
            {
                inbound = await listener.AcceptTcpClientAsync(_stop.Token);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                return; // cut or disposed
            }

            var outbound = new TcpClient();
            try
            {
                await outbound.ConnectAsync(_target, _stop.Token);
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException)
            {
                inbound.Dispose();
                outbound.Dispose();
                continue;
            }

            lock (_lock)
            {
                _connections.Add(inbound);
                _connections.Add(outbound);
            }

            _ = PumpAsync(inbound, outbound);
            _ = PumpAsync(outbound, inbound);
        }
    }

    private static async Task PumpAsync(TcpClient from, TcpClient to)
    {
        try
        {
            await from.GetStream().CopyToAsync(to.GetStream());
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or SocketException or InvalidOperationException)
        {
        }
        finally
        {
            from.Dispose();
            to.Dispose();
        }
    }
}

using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// Plain MQTT over TCP (<c>Mqtt:Port</c>) on Saito's own sockets, when <c>Mqtt:TcpTransport</c> is <c>Sockets</c> (the
/// default): it accepts connections and hands each to the broker as an <see cref="MqttSocketPipe"/>. It binds the
/// addresses Kestrel would for <c>Mqtt:BindAddress</c> (<c>localhost</c>: 127.0.0.1 and ::1; <c>*</c>, <c>0.0.0.0</c>,
/// <c>::</c> or a host name: every interface; an IP: that address) and fails the start the same way when a port is
/// taken. It starts after the broker and stops before it (no new connections once the broker closes them all); once
/// everything has stopped it waits for the connections the broker closed to end.
/// </summary>
public sealed partial class MqttSocketListener : IHostedLifecycleService, IDisposable
{
    private const int Backlog = 512;

    private readonly MqttBroker _broker;
    private readonly MqttBrokerOptions _options;
    private readonly ILogger<MqttSocketListener> _logger;
    private readonly List<Socket> _listeners = [];
    private readonly List<Task> _acceptLoops = [];
    private readonly CancellationTokenSource _stopping = new();
    private readonly TaskCompletionSource _allEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Action _ended;
    private int _running;
    private long _acceptFailures;

    public MqttSocketListener(MqttBroker broker, IOptions<MqttBrokerOptions> options, ILogger<MqttSocketListener> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        _broker = broker;
        _options = options.Value;
        _logger = logger;
        _ended = Ended;
    }

    /// <summary>Whether this listener serves <c>Mqtt:Port</c> (otherwise Kestrel does, or the port is off).</summary>
    public static bool Serves(MqttBrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.Port > 0 && options.TcpTransport == MqttTcpTransport.Sockets;
    }

    /// <summary>The addresses bound (port 0 becomes the port the system chose).</summary>
    public IReadOnlyList<EndPoint> LocalEndPoints => _listeners.Select(l => l.LocalEndPoint!).ToList();

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (!Serves(_options))
        {
            return Task.CompletedTask;
        }

        foreach (var endPoint in EndPointsFor(_options.BindAddress, _options.Port))
        {
            _listeners.Add(Bind(endPoint));
        }

        foreach (var listener in _listeners)
        {
            _acceptLoops.Add(AcceptLoopAsync(listener));
        }

        return Task.CompletedTask;
    }

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Before the broker stops: no new connections.</summary>
    public Task StoppingAsync(CancellationToken cancellationToken) => StopListeningAsync();

    public Task StopAsync(CancellationToken cancellationToken) => StopListeningAsync();

    /// <summary>After the broker has closed every connection: wait (within the host's shutdown time) for them to end.</summary>
    public async Task StoppedAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _running) == 0)
        {
            _allEnded.TrySetResult();
        }

        await _allEnded.Task.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    private async Task StopListeningAsync()
    {
        if (_stopping.IsCancellationRequested)
        {
            return;
        }

        await _stopping.CancelAsync();
        foreach (var listener in _listeners)
        {
            listener.Dispose();
        }

        await Task.WhenAll(_acceptLoops).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    /// <summary>The end points Kestrel binds for a host: see the class summary.</summary>
    internal static IReadOnlyList<IPEndPoint> EndPointsFor(string host, int port)
    {
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            return Socket.OSSupportsIPv6
                ? [new IPEndPoint(IPAddress.Loopback, port), new IPEndPoint(IPAddress.IPv6Loopback, port)]
                : [new IPEndPoint(IPAddress.Loopback, port)];
        }

        if (host is not ("*" or "+" or "0.0.0.0" or "[::]" or "::") && IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            return [new IPEndPoint(ip, port)];
        }

        return [new IPEndPoint(Socket.OSSupportsIPv6 ? IPAddress.IPv6Any : IPAddress.Any, port)];
    }

    private static Socket Bind(IPEndPoint endPoint)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (endPoint.Address.Equals(IPAddress.IPv6Any))
            {
                socket.DualMode = true;
            }
            else if (endPoint.AddressFamily == AddressFamily.InterNetworkV6)
            {
                // ::1 beside 127.0.0.1: IPv6 only, as Kestrel binds it.
                socket.DualMode = false;
            }

            socket.Bind(endPoint);
            socket.Listen(Backlog);
            return socket;
        }
        catch (SocketException e)
        {
            socket.Dispose();
            string where = endPoint.AddressFamily == AddressFamily.InterNetworkV6 ? $"[{endPoint.Address}]:{endPoint.Port}" : endPoint.ToString();
            string message = $"Failed to bind to address mqtt://{where}: " +
                             (e.SocketErrorCode == SocketError.AddressAlreadyInUse ? "address already in use." : e.Message);
            throw new IOException(message, e.SocketErrorCode == SocketError.AddressAlreadyInUse ? new AddressInUseException(message, e) : e);
        }
    }

    private async Task AcceptLoopAsync(Socket listener)
    {
        var token = _stopping.Token;
        while (!token.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await listener.AcceptAsync(token);
            }
            catch (Exception e) when (token.IsCancellationRequested && e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }
            catch (SocketException e)
            {
                // Out of file descriptors (EMFILE), a connection reset before it was accepted, ...: the listener goes on.
                if (Interlocked.Increment(ref _acceptFailures) % 1000 == 1)
                {
                    LogAcceptFailed(listener.LocalEndPoint?.ToString() ?? "?", e.SocketErrorCode, e.Message, _acceptFailures);
                }

                if (e.SocketErrorCode is SocketError.TooManyOpenSockets or SocketError.NoBufferSpaceAvailable)
                {
                    // Nothing can be accepted until a connection closes: do not spin on the error meanwhile.
                    await Task.Delay(TimeSpan.FromMilliseconds(50), token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                }

                continue;
            }

            Serve(client);
        }
    }

    private void Serve(Socket client)
    {
        Interlocked.Increment(ref _running);
        MqttSocketPipe? pipe = null;
        try
        {
            client.NoDelay = true;
            pipe = new MqttSocketPipe(client);
            _ = _broker.RunConnectionAsync(pipe, new MqttConnectionInfo
            {
                Transport = "tcp",
                RemoteEndPoint = client.RemoteEndPoint,
                Abort = pipe.Abort,
                Ended = _ended,
            });
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Reset between accept and now: nothing was started for it.
            client.Dispose();
            Ended();
        }
    }

    private void Ended()
    {
        if (Interlocked.Decrement(ref _running) == 0 && _stopping.IsCancellationRequested)
        {
            _allEnded.TrySetResult();
        }
    }

    public void Dispose()
    {
        foreach (var listener in _listeners)
        {
            listener.Dispose();
        }

        _stopping.Dispose();
    }

    [LoggerMessage(1101, LogLevel.Warning, "Accepting an MQTT connection on {EndPoint} failed ({Error}: {Detail}); {Failures} failures so far, logged one in a thousand")]
    private partial void LogAcceptFailed(string endPoint, SocketError error, string detail, long failures);
}

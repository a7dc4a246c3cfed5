using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Client;

/// <summary>
/// A broker whose every packet the test writes by hand, for what a real broker will not do on demand:
/// withhold an acknowledgement, drop the line at an exact step, send a duplicate, stay silent to a PINGREQ.
/// Behaviour that any broker shows is tested against Mosquitto instead.
/// </summary>
internal sealed class ScriptedBroker : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);

    public ScriptedBroker() => _listener.Start();

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    public async Task<ScriptedConnection> AcceptAsync()
    {
        using var cts = ClientTestSupport.TimeoutToken();
        var socket = await _listener.AcceptSocketAsync(cts.Token);
        return new ScriptedConnection(socket);
    }

    /// <summary>Accepts, reads CONNECT and answers CONNACK.</summary>
    public async Task<(ScriptedConnection Connection, ConnectPacket Connect)> AcceptSessionAsync(bool sessionPresent = false, MqttProperties? connAckProperties = null)
    {
        var connection = await AcceptAsync();
        var connect = await connection.ExpectAsync<ConnectPacket>();
        await connection.SendAsync(new ConnAckPacket { SessionPresent = sessionPresent, Properties = connAckProperties });
        return (connection, connect);
    }

    public ValueTask DisposeAsync()
    {
        _listener.Stop();
        _listener.Dispose();
        return ValueTask.CompletedTask;
    }
}

internal sealed class ScriptedConnection : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly NetworkStream _stream;
    private readonly PipeReader _reader;
    private readonly PipeWriter _writer;

    public ScriptedConnection(Socket socket)
    {
        _socket = socket;
        _stream = new NetworkStream(socket, ownsSocket: true);
        _reader = PipeReader.Create(_stream);
        _writer = PipeWriter.Create(_stream);
    }

    public MqttProtocolVersion Version { get; private set; } = MqttProtocolVersion.V500;

    public async Task SendAsync(MqttPacket packet)
    {
        MqttPacketEncoder.Encode(_writer, packet, Version);
        await _writer.FlushAsync(TestContext.Current.CancellationToken);
    }

    /// <summary>The next packet from the client, or null when it closed the connection.</summary>
    public async Task<MqttPacket?> ReadAsync(TimeSpan? timeout = null)
    {
        using var cts = ClientTestSupport.TimeoutToken(timeout);
        while (true)
        {
            var result = await _reader.ReadAsync(cts.Token);
            var buffer = result.Buffer;
            if (MqttFrameReader.TryRead(ref buffer, MqttFrameReader.MaxRemainingLength, out var frame))
            {
                var packet = MqttPacketDecoder.Decode(frame, Version);
                _reader.AdvanceTo(buffer.Start);
                if (packet is ConnectPacket connect)
                {
                    Version = connect.ProtocolVersion;
                }

                return packet;
            }

            _reader.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted)
            {
                return null;
            }
        }
    }

    /// <summary>The next packet, which must be a <typeparamref name="T"/> (PINGREQs in between are answered and skipped).</summary>
    public async Task<T> ExpectAsync<T>(TimeSpan? timeout = null)
        where T : MqttPacket
    {
        while (true)
        {
            var packet = await ReadAsync(timeout);
            if (packet is PingReqPacket && typeof(T) != typeof(PingReqPacket))
            {
                await SendAsync(PingRespPacket.Instance);
                continue;
            }

            packet.ShouldNotBeNull($"the client closed the connection while a {typeof(T).Name} was expected");
            return packet.ShouldBeOfType<T>();
        }
    }

    public async Task<PublishAckPacket> ExpectAckAsync(MqttPacketType type)
    {
        var ack = await ExpectAsync<PublishAckPacket>();
        ack.Type.ShouldBe(type);
        return ack;
    }

    /// <summary>Drops the line without DISCONNECT.</summary>
    public void Drop() => _socket.Dispose();

    public async ValueTask DisposeAsync()
    {
        await _reader.CompleteAsync();
        await _writer.CompleteAsync();
        await _stream.DisposeAsync();
    }
}

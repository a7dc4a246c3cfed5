using System.IO.Pipelines;
using System.Net.Sockets;
using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Common;

/// <summary>
/// A bare MQTT connection for load generation: the codec over a socket and pipes, nothing else, so the
/// client's own cost stays small and is the same whichever broker is measured.
/// </summary>
internal sealed class LoadConnection : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    private readonly SemaphoreSlim _writeLock = new(1, 1);

    private LoadConnection(Socket socket, MqttProtocolVersion version)
    {
        _socket = socket;
        var stream = new NetworkStream(socket, ownsSocket: true);
        _input = PipeReader.Create(stream);
        _output = PipeWriter.Create(stream);
        Version = version;
    }

    public MqttProtocolVersion Version { get; }

    public static async Task<LoadConnection> ConnectAsync(string host, int port, string clientId, MqttProtocolVersion version, CancellationToken token)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(host, port, token);
        var connection = new LoadConnection(socket, version);
        await connection.SendAsync(new ConnectPacket
        {
            ProtocolVersion = version,
            ClientId = clientId,
            CleanStart = true,
            KeepAliveSeconds = 60,
            Properties = version == MqttProtocolVersion.V500 ? new MqttProperties { ReceiveMaximum = 65535 } : null,
        }, token);
        var ack = await connection.ReceiveAsync(token) as ConnAckPacket ?? throw new InvalidOperationException("Expected CONNACK");
        if (ack.ReasonCode != 0)
        {
            throw new InvalidOperationException($"CONNECT refused: 0x{ack.ReasonCode:X2}");
        }

        return connection;
    }

    public async ValueTask SendAsync(MqttPacket packet, CancellationToken token)
    {
        await _writeLock.WaitAsync(token);
        try
        {
            MqttPacketEncoder.Encode(_output, packet, Version);
            await _output.FlushAsync(token);
        }
        finally
        {
            _writeLock.Release();
        }
    }

    /// <summary>Writes many packets under one flush.</summary>
    public async ValueTask SendBatchAsync(Action<PipeWriter> write, CancellationToken token)
    {
        await _writeLock.WaitAsync(token);
        try
        {
            write(_output);
            await _output.FlushAsync(token);
        }
        finally
        {
            _writeLock.Release();
        }
    }

    public async ValueTask<MqttPacket> ReceiveAsync(CancellationToken token)
    {
        MqttPacket? packet = null;
        await ReceiveManyAsync((in MqttFrame frame) =>
        {
            packet = MqttPacketDecoder.Decode(frame, Version);
            return false;
        }, token);
        return packet ?? throw new IOException("Connection closed");
    }

    public delegate bool FrameHandler(in MqttFrame frame);

    /// <summary>The write side, for a loop that is the only writer (the subscriber acknowledging in batches).</summary>
    public PipeWriter Output => _output;

    /// <summary>
    /// Hands frames to <paramref name="handler"/> until it returns false or the connection closes;
    /// <paramref name="afterBatch"/> runs after each read's frames (to flush what the handler wrote).
    /// </summary>
    public async ValueTask ReceiveManyAsync(FrameHandler handler, CancellationToken token, Func<ValueTask>? afterBatch = null)
    {
        while (true)
        {
            var result = await _input.ReadAsync(token);
            var buffer = result.Buffer;
            bool more = true;
            try
            {
                while (more && MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var frame))
                {
                    more = handler(frame);
                }
            }
            finally
            {
                _input.AdvanceTo(buffer.Start, buffer.End);
            }

            if (afterBatch is not null)
            {
                await afterBatch();
            }

            if (!more || result.IsCompleted)
            {
                return;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        // The writer before the reader: completing it flushes what it still holds (a DISCONNECT whose send failed),
        // which needs the stream the reader's completion disposes. A connection the broker already closed has nothing
        // more to say, and closing it must not fail the run (nor hide the error that ended it).
        await UnlessGoneAsync(() => SendAsync(new DisconnectPacket(), CancellationToken.None));
        await UnlessGoneAsync(() => _output.CompleteAsync());
        await UnlessGoneAsync(() => _input.CompleteAsync());
        _socket.Dispose();
        _writeLock.Dispose();
    }

    private static async ValueTask UnlessGoneAsync(Func<ValueTask> step)
    {
        try
        {
            await step();
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or InvalidOperationException)
        {
            // Already gone.
        }
    }
}

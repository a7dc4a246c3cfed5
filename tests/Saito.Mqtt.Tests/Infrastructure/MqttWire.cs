using System.IO.Pipelines;
using System.Net.Sockets;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>
/// A bare MQTT connection for tests that must see every packet: nothing is acknowledged or answered
/// on its own; the test sends and expects each packet itself.
/// </summary>
public sealed class MqttWire : IAsyncDisposable
{
    private readonly TcpClient _tcp;
    private readonly PipeReader _input;
    private readonly PipeWriter _output;

    private MqttWire(TcpClient tcp, MqttProtocolVersion version)
    {
        _tcp = tcp;
        var stream = tcp.GetStream();
        _input = PipeReader.Create(stream);
        _output = PipeWriter.Create(stream);
        Version = version;
    }

    public MqttProtocolVersion Version { get; }

    public static async Task<MqttWire> OpenAsync(BrokerEndpoint broker, MqttProtocolVersion version)
    {
        var tcp = new TcpClient { NoDelay = true };
        await tcp.ConnectAsync(broker.Host, broker.Port);
        return new MqttWire(tcp, version);
    }

    /// <summary>Opens a connection and completes the CONNECT handshake; throws unless the broker accepts.</summary>
    public static async Task<MqttWire> ConnectAsync(BrokerEndpoint broker, MqttProtocolVersion version, string? clientId = null,
        bool cleanStart = true, MqttProperties? properties = null)
    {
        var wire = await OpenAsync(broker, version);
        await wire.SendAsync(new ConnectPacket
        {
            ProtocolVersion = version,
            ClientId = clientId ?? "t-" + Guid.NewGuid().ToString("N")[..12],
            CleanStart = cleanStart,
            KeepAliveSeconds = 30,
            Properties = properties,
        });
        var ack = await wire.ExpectAsync<ConnAckPacket>();
        ack.ReasonCode.ShouldBe((byte)0, "CONNECT refused");
        return wire;
    }

    public async Task SendAsync(MqttPacket packet)
    {
        MqttPacketEncoder.Encode(_output, packet, Version);
        await _output.FlushAsync();
    }

    public async Task SendRawAsync(byte[] bytes)
    {
        await _output.WriteAsync(bytes);
    }

    /// <summary>The next packet, or null when the connection closed; throws on timeout.</summary>
    public async Task<MqttPacket?> ReceiveAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(5));
        while (true)
        {
            ReadResult result;
            try
            {
                result = await _input.ReadAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"No packet within {timeout ?? TimeSpan.FromSeconds(5)}");
            }
            catch (IOException)
            {
                return null;
            }

            var buffer = result.Buffer;
            if (MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var frame))
            {
                var packet = MqttPacketDecoder.Decode(frame, Version);
                _input.AdvanceTo(buffer.Start);
                return packet;
            }

            _input.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted)
            {
                return null;
            }
        }
    }

    public async Task<T> ExpectAsync<T>(TimeSpan? timeout = null)
        where T : MqttPacket
    {
        var packet = await ReceiveAsync(timeout);
        packet.ShouldNotBeNull($"connection closed while waiting for {typeof(T).Name}");
        return packet.ShouldBeOfType<T>();
    }

    /// <summary>Asserts that nothing arrives (and the connection stays open) for <paramref name="duration"/>.</summary>
    public async Task ExpectNothingAsync(TimeSpan duration)
    {
        try
        {
            var packet = await ReceiveAsync(duration);
            throw new ShouldAssertException($"Expected nothing for {duration}, got {packet?.Type.ToString() ?? "a closed connection"}");
        }
        catch (TimeoutException)
        {
            // Nothing came: as expected.
        }
    }

    /// <summary>Reads until the broker closes the connection; returns the DISCONNECT reason code if one came first.</summary>
    public async Task<MqttReasonCode?> ExpectClosedAsync(TimeSpan? timeout = null)
    {
        MqttReasonCode? reason = null;
        while (true)
        {
            MqttPacket? packet;
            try
            {
                packet = await ReceiveAsync(timeout);
            }
            catch (MqttProtocolException)
            {
                return reason;
            }

            if (packet is null)
            {
                return reason;
            }

            if (packet is DisconnectPacket disconnect)
            {
                reason = disconnect.ReasonCode;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _input.CompleteAsync();
        await _output.CompleteAsync();
        _tcp.Dispose();
    }
}

using System.Buffers;
using System.Text;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;
using static Saito.Fuzz.Targets.MqttBytes;

namespace Saito.Fuzz.Targets;

/// <summary>
/// <c>mqtt-packet</c>: the bytes a client sends, through what the broker does with them before routing: the frame
/// reader (fixed header, remaining length, size limit), then per packet <c>DecodeConnect</c>, the copy-free
/// <c>DecodePublish</c> with the shared topic cache, or <c>Decode</c>, and for SUBSCRIBE and UNSUBSCRIBE the topic
/// filter checks (<see cref="MqttTopic"/>). Each input runs as MQTT 3.1.1 and as 5.0, once in one buffer and once
/// cut into small segments as a pipe may hand it over. The contract: nothing but <see cref="MqttProtocolException"/>.
/// Packets a client never sends (CONNACK, SUBACK, ...) are decoded too: the test tools (RawMqttConnection, the load tool)
/// decode them from a broker.
/// </summary>
internal sealed class MqttPacketTarget : FuzzTarget
{
    private const int MaxPacketSize = 1024 * 1024;
    private static readonly MqttProtocolVersion[] Versions = [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    private readonly MqttTopicCache _topics = new(capacity: 256);
    private readonly StringBuilder _outcome = new();
    private readonly SortedSet<string> _seen = new(StringComparer.Ordinal);

    public override string Name => "mqtt-packet";

    public override string Description => "MQTT frame reader and packet decoder, 3.1.1 and 5.0, with the broker's topic filter checks";

    public override string Run(ReadOnlySpan<byte> input)
    {
        _outcome.Clear();
        byte[] bytes = input.ToArray();
        foreach (var version in Versions)
        {
            _outcome.Append(version == MqttProtocolVersion.V311 ? "3:" : " 5:");
            int start = _outcome.Length;
            RunStream(new ReadOnlySequence<byte>(bytes), version, _outcome);
            int mark = _outcome.Length;
            RunStream(Segmented(bytes, 1 + (bytes.Length % 7) + (bytes.Length / 256)), version, _outcome);
            string whole = _outcome.ToString(start, mark - start);
            string segmented = _outcome.ToString(mark, _outcome.Length - mark);
            if (whole != segmented)
            {
                throw new ContractViolationException($"MQTT {version}: one buffer gave '{whole}', segments gave '{segmented}'");
            }

            _outcome.Length = mark;
        }

        return _outcome.ToString();
    }

    private void RunStream(ReadOnlySequence<byte> buffer, MqttProtocolVersion version, StringBuilder outcome)
    {
        try
        {
            // The outcome says what kinds of packet were read, not how many nor in which order.
            _seen.Clear();
            while (MqttFrameReader.TryRead(ref buffer, MaxPacketSize, out var frame))
            {
                _seen.Add(Handle(frame, version));
            }

            outcome.AppendJoin(',', _seen).Append(',');

            outcome.Append(buffer.IsEmpty ? "end" : "more");
        }
        catch (MqttProtocolException ex)
        {
            // The documented rejection: the broker closes the connection (5.0: DISCONNECT with this reason code).
            outcome.Append('!').Append((int)ex.ReasonCode).Append(' ').Append(Shape(ex.Message));
        }
    }

    private string Handle(in MqttFrame frame, MqttProtocolVersion version)
    {
        switch (frame.Type)
        {
            case MqttPacketType.Connect:
                var connect = MqttPacketDecoder.DecodeConnect(frame);
                return connect.Will is null ? "CONNECT" : "CONNECT+will";
            case MqttPacketType.Publish:
                var publish = MqttPacketDecoder.DecodePublish(frame, version, _topics);
                _ = publish.Payload.ToArray();
                return publish.Properties is null ? "PUBLISH" : "PUBLISH+p";
            case MqttPacketType.Subscribe:
                var subscribe = (SubscribePacket)MqttPacketDecoder.Decode(frame, version);
                return "SUBSCRIBE" + Filters(subscribe.Subscriptions.Select(s => s.TopicFilter));
            case MqttPacketType.Unsubscribe:
                var unsubscribe = (UnsubscribePacket)MqttPacketDecoder.Decode(frame, version);
                return "UNSUBSCRIBE" + Filters(unsubscribe.TopicFilters);
            default:
                var packet = MqttPacketDecoder.Decode(frame, version, _topics);
                return packet.Type.ToString();
        }
    }

    /// <summary>What the broker checks of each filter before it touches its subscription tree.</summary>
    private static string Filters(IEnumerable<string> filters)
    {
        var kinds = new SortedSet<string>(StringComparer.Ordinal);
        foreach (string filter in filters)
        {
            bool shared = MqttTopic.TryParseShared(filter, out _, out string inner, out bool valid);
            kinds.Add(shared ? (valid ? "share" : "bad-share") : MqttTopic.IsValidFilter(inner) ? "ok" : "bad");
        }

        return " " + string.Join(' ', kinds);
    }

    /// <summary>The bytes in segments of <paramref name="size"/> bytes, each its own array.</summary>
    internal static ReadOnlySequence<byte> Segmented(byte[] bytes, int size)
    {
        Chunk? first = null;
        Chunk? last = null;
        for (int at = 0; at < bytes.Length; at += size)
        {
            last = new Chunk(bytes.AsMemory(at, Math.Min(size, bytes.Length - at)).ToArray(), last);
            first ??= last;
        }

        return first is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(first, 0, last!, last!.Memory.Length);
    }

    /// <summary>One segment, linked behind the one before it.</summary>
    private sealed class Chunk : ReadOnlySequenceSegment<byte>
    {
        public Chunk(byte[] bytes, Chunk? previous)
        {
            Memory = bytes;
            if (previous is not null)
            {
                RunningIndex = previous.RunningIndex + previous.Memory.Length;
                previous.Next = this;
            }
        }
    }

    public override IReadOnlyList<byte[]> Seeds()
    {
        var seeds = new List<byte[]>();
        foreach (var version in Versions)
        {
            bool v5 = version == MqttProtocolVersion.V500;
            int first = seeds.Count;
            var props = v5 ? new MqttProperties { UserProperties = [new("k", "v")], ReasonString = "why" } : null;
            seeds.Add(Encode(new ConnectPacket
            {
                ProtocolVersion = version,
                ClientId = "hub-1",
                KeepAliveSeconds = 60,
                UserName = "user",
                Password = "secret"u8.ToArray(),
                Will = new MqttWill
                {
                    Topic = "saito/hub-1/status",
                    Payload = "offline"u8.ToArray(),
                    QoS = MqttQoS.AtLeastOnce,
                    Retain = true,
                    Properties = v5 ? new MqttProperties { WillDelayInterval = 5, ContentType = "text/plain" } : null,
                },
                Properties = v5 ? new MqttProperties { SessionExpiryInterval = 3600, ReceiveMaximum = 64, TopicAliasMaximum = 8, MaximumPacketSize = 65536, RequestProblemInformation = 1 } : null,
            }, version));
            seeds.Add(Encode(new ConnAckPacket { SessionPresent = true, Properties = v5 ? new MqttProperties { AssignedClientIdentifier = "saito-1", MaximumQoS = 1, ServerKeepAlive = 30 } : null }, version));
            foreach (var qos in new[] { MqttQoS.AtMostOnce, MqttQoS.AtLeastOnce, MqttQoS.ExactlyOnce })
            {
                seeds.Add(Encode(new PublishPacket
                {
                    Topic = "saito/hub-1/wrist-17/biosensor",
                    QoS = qos,
                    PacketId = qos == MqttQoS.AtMostOnce ? (ushort)0 : (ushort)7,
                    Retain = qos == MqttQoS.AtLeastOnce,
                    Payload = """{"ts":"2026-11-23T09:15:02.250Z","hr":72}"""u8.ToArray(),
                    Properties = v5 ? new MqttProperties { TopicAlias = 3, ContentType = "application/json", PayloadFormatIndicator = 1, MessageExpiryInterval = 60, ResponseTopic = "r/t", CorrelationData = new byte[] { 1, 2 }, UserProperties = [new("a", "b")] } : null,
                }, version));
            }

            foreach (var type in new[] { MqttPacketType.PubAck, MqttPacketType.PubRec, MqttPacketType.PubRel, MqttPacketType.PubComp })
            {
                seeds.Add(Encode(new PublishAckPacket(type) { PacketId = 7, ReasonCode = v5 ? MqttReasonCode.NoMatchingSubscribers : 0, Properties = props }, version));
            }

            seeds.Add(Encode(new SubscribePacket
            {
                PacketId = 9,
                Subscriptions =
                [
                    new MqttSubscription { TopicFilter = "saito/+/+/biosensor", QoS = MqttQoS.AtLeastOnce },
                    new MqttSubscription { TopicFilter = "$share/g/saito/#", QoS = MqttQoS.ExactlyOnce, NoLocal = v5, RetainHandling = v5 ? MqttRetainHandling.DoNotSend : 0 },
                ],
                Properties = v5 ? new MqttProperties { SubscriptionIdentifiers = [300], UserProperties = [new("x", "y")] } : null,
            }, version));
            seeds.Add(Encode(new SubAckPacket { PacketId = 9, ReasonCodes = [MqttReasonCode.GrantedQoS1, MqttReasonCode.UnspecifiedError], Properties = props }, version));
            seeds.Add(Encode(new UnsubscribePacket { PacketId = 10, TopicFilters = ["saito/#", "a/+/b"] }, version));
            seeds.Add(Encode(new UnsubAckPacket { PacketId = 10, ReasonCodes = v5 ? [MqttReasonCode.Success] : [], Properties = props }, version));
            seeds.Add(Encode(PingReqPacket.Instance, version));
            seeds.Add(Encode(new DisconnectPacket { ReasonCode = v5 ? MqttReasonCode.DisconnectWithWillMessage : 0, Properties = v5 ? new MqttProperties { SessionExpiryInterval = 0, ReasonString = "bye" } : null }, version));
            if (v5)
            {
                seeds.Add(Encode(new AuthPacket { ReasonCode = MqttReasonCode.ContinueAuthentication, Properties = new MqttProperties { AuthenticationMethod = "SCRAM", AuthenticationData = new byte[] { 9 } } }, version));
            }

            // A session as the broker sees one: CONNECT, SUBSCRIBE, PUBLISH, PINGREQ, DISCONNECT in one stream.
            // Indexes into this version's seeds above: 0 CONNECT, 3 PUBLISH QoS 1, 9 SUBSCRIBE, 13 PINGREQ, 14 DISCONNECT.
            seeds.Add([.. seeds[first], .. seeds[first + 9], .. seeds[first + 3], .. seeds[first + 13], .. seeds[first + 14]]);
        }

        return seeds;
    }

    public override IReadOnlyList<byte[]> Tokens { get; } =
    [
        [0x10], [0x30], [0x32], [0x34], [0x3D], [0x62], [0x82], [0xA2], [0xC0], [0xE0], [0xF0],
        [0x00, 0x04, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 0x04], [0x00, 0x04, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 0x05],
        [0xFF, 0xFF, 0xFF, 0x7F], [0x80, 0x80, 0x80, 0x80], [0x80, 0x00], [0x00, 0x00], [0xFF, 0xFF],
        [0x26, 0x00, 0x01, (byte)'k', 0x00, 0x01, (byte)'v'], [0x0B, 0xFF, 0xFF, 0xFF, 0x7F], [0x0B, 0x00], [0x23, 0x00, 0x00], [0x23, 0x00, 0x01],
        [0x01, 0x02], [0x03, 0x00, 0x00], [0x09, 0xFF, 0xFF], [0x15, 0x00, 0x01, (byte)'A'], [0x16, 0x00, 0x00], [0x27, 0x00, 0x00, 0x00, 0x00],
        [0x24, 0x02], [0x2A, 0x01], [0x11, 0xFF, 0xFF, 0xFF, 0xFF],
        "+"u8.ToArray(), "#"u8.ToArray(), "/"u8.ToArray(), "$share/"u8.ToArray(), "$SYS/"u8.ToArray(),
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xC3], [0x00],
    ];

    public override byte[] Malformed(Random random)
    {
        bool v5 = random.Next(2) == 0;
        byte[] connect = Encode(new ConnectPacket { ProtocolVersion = v5 ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311, ClientId = "c" }, v5 ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311);
        byte[] noProperties = v5 ? [0] : [];
        switch (random.Next(9))
        {
            case 0:
                // A topic filter of tens of thousands of levels (a string holds at most 65,535 bytes).
                int levels = random.Next(1_000, 32_768);
                string filter = string.Join('/', Enumerable.Repeat(random.Next(3) switch { 0 => "+", 1 => "a", _ => string.Empty }, levels)) + (random.Next(2) == 0 ? "/#" : string.Empty);
                return [.. connect, .. Packet(0x82, UInt16(1), noProperties, String(filter[..Math.Min(filter.Length, 65_535)]), [1])];
            case 1:
                // A property length far beyond the packet.
                return [.. connect, .. Packet(0x30, String("t"), VariableByteInteger(random.Next(1, 268_435_456)), [0x01, 0x01])];
            case 2:
                // A property given twice.
                var property = random.Next(4) switch
                {
                    0 => new byte[] { 0x01, 0x01 },
                    1 => [0x23, 0x00, 0x05],
                    2 => [0x03, .. String("a")],
                    _ => [0x02, 0, 0, 0, 1],
                };
                return Packet(0x30, String("t"), Properties(property, property));
            case 3:
                // A remaining length that lies, or is not in its shortest form, or is five bytes long.
                byte[] publish = Packet(0x32, String("saito/x"), UInt16(1), noProperties, "{}"u8.ToArray());
                byte[] length = random.Next(3) switch
                {
                    0 => VariableByteInteger(publish.Length + random.Next(-8, 8)),
                    1 => [(byte)(0x80 | (publish.Length - 2)), 0x80, 0x80, 0x00],
                    _ => [0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
                };
                return [publish[0], .. length, .. publish[2..]];
            case 4:
                // Reserved flags in the fixed header of any type.
                byte[] body = Packet(0x82, UInt16(1), noProperties, String("a/b"), [0]);
                return [.. connect, (byte)((random.Next(16) << 4) | random.Next(16)), .. body[1..]];
            case 5:
                // Bad UTF-8 in a topic, a client id or a user property.
                byte[][] bad = [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82], [0x00], [0xF4, 0x90, 0x80, 0x80]];
                byte[] utf8 = [(byte)'a', .. bad[random.Next(bad.Length)], (byte)'b'];
                return random.Next(3) switch
                {
                    0 => Packet(0x30, Utf8String(utf8), noProperties),
                    1 => Packet(0x10, String("MQTT"), [v5 ? (byte)5 : (byte)4, 0x02, 0, 60], noProperties, Utf8String(utf8)),
                    _ => Packet(0x30, String("t"), Properties([(byte)MqttPropertyId.UserProperty, .. Utf8String(utf8), .. String("v")])),
                };
            case 6:
                // Thousands of user properties, or subscription identifiers, in one packet.
                int count = random.Next(1_000, 20_000);
                byte[] one = random.Next(2) == 0 ? UserProperty("k", "v") : [0x0B, 0x01];
                return Packet(0x30, String("t"), Properties([.. Enumerable.Repeat(one, count).SelectMany(p => p)]));
            case 7:
                // A field cut short: the length says more than the packet has.
                return Packet(0x10, String("MQTT"), [v5 ? (byte)5 : (byte)4, 0xC6, 0, 60], noProperties, String("c"), UInt16(random.Next(1, 65_536)));
            default:
                // Many small packets in a row (a client that never stops).
                byte[] ping = [0xC0, 0x00];
                return [.. connect, .. Enumerable.Repeat(ping, random.Next(100, 5_000)).SelectMany(p => p)];
        }
    }
}

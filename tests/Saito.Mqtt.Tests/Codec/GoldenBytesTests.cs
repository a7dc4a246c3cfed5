using System.Buffers;
using Saito.Mqtt.Packets;
using static Saito.Mqtt.Packets.MqttProtocolVersion;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Bytes written out by hand from the standards' figures and examples, to catch a mistake the
/// encoder and decoder share (which a round trip cannot see). Each case is checked both ways:
/// the encoder writes exactly these bytes, and the decoder reads them to the same fields.
/// </summary>
public sealed class GoldenBytesTests
{
    public static TheoryData<string, MqttProtocolVersion, MqttPacket, byte[]> Golden => new()
    {
        {
            // 3.1.1 figures 3.5-3.6: "MQTT", level 4, flags 0xCE (user name, password, will QoS 1, will, clean session), keep alive 10.
            "3.1.1 CONNECT with will and credentials", V311,
            new ConnectPacket
            {
                ProtocolVersion = V311, CleanStart = true, KeepAliveSeconds = 10, ClientId = "saito",
                Will = new MqttWill { Topic = "w", Payload = "bye"u8.ToArray(), QoS = MqttQoS.AtLeastOnce },
                UserName = "u", Password = "p"u8.ToArray(),
            },
            [
                0x10, 0x1F,
                0x00, 0x04, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 0x04, 0xCE, 0x00, 0x0A,
                0x00, 0x05, (byte)'s', (byte)'a', (byte)'i', (byte)'t', (byte)'o',
                0x00, 0x01, (byte)'w',
                0x00, 0x03, (byte)'b', (byte)'y', (byte)'e',
                0x00, 0x01, (byte)'u',
                0x00, 0x01, (byte)'p',
            ]
        },
        {
            // 5.0 figure 3-7 shape, with a Session Expiry Interval of 3600 s.
            "5.0 CONNECT with session expiry", V500,
            new ConnectPacket
            {
                ProtocolVersion = V500, CleanStart = true, KeepAliveSeconds = 60, ClientId = "dev",
                Properties = new MqttProperties { SessionExpiryInterval = 3600 },
            },
            [
                0x10, 0x15,
                0x00, 0x04, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 0x05, 0x02, 0x00, 0x3C,
                0x05, 0x11, 0x00, 0x00, 0x0E, 0x10,
                0x00, 0x03, (byte)'d', (byte)'e', (byte)'v',
            ]
        },
        { "3.1.1 CONNACK, session present", V311, new ConnAckPacket { SessionPresent = true, ReasonCode = 0 }, [0x20, 0x02, 0x01, 0x00] },
        {
            "5.0 CONNACK refused, not authorized, with a reason string", V500,
            new ConnAckPacket { ReasonCode = 0x87, Properties = new MqttProperties { ReasonString = "no" } },
            [0x20, 0x08, 0x00, 0x87, 0x05, 0x1F, 0x00, 0x02, (byte)'n', (byte)'o']
        },
        {
            // 5.0 figure 3-9 (topic "a/b", packet identifier 10) with every PUBLISH property a server may forward.
            "5.0 PUBLISH QoS 1 retained with properties", V500,
            new PublishPacket
            {
                Topic = "a/b", QoS = MqttQoS.AtLeastOnce, Retain = true, PacketId = 10, Payload = "hi"u8.ToArray(),
                Properties = new MqttProperties
                {
                    PayloadFormatIndicator = 1, MessageExpiryInterval = 3600, ContentType = "json", ResponseTopic = "r",
                    CorrelationData = new byte[] { 1, 2 }, SubscriptionIdentifiers = [200], TopicAlias = 5,
                    UserProperties = [new("k", "v")],
                },
            },
            [
                0x33, 0x2E,
                0x00, 0x03, (byte)'a', (byte)'/', (byte)'b',
                0x00, 0x0A,
                0x24,
                0x01, 0x01,
                0x02, 0x00, 0x00, 0x0E, 0x10,
                0x03, 0x00, 0x04, (byte)'j', (byte)'s', (byte)'o', (byte)'n',
                0x08, 0x00, 0x01, (byte)'r',
                0x09, 0x00, 0x02, 0x01, 0x02,
                0x0B, 0xC8, 0x01,
                0x23, 0x00, 0x05,
                0x26, 0x00, 0x01, (byte)'k', 0x00, 0x01, (byte)'v',
                (byte)'h', (byte)'i',
            ]
        },
        {
            "3.1.1 PUBLISH QoS 2 DUP", V311,
            new PublishPacket { Topic = "a/b", QoS = MqttQoS.ExactlyOnce, Dup = true, PacketId = 0x1234, Payload = new byte[] { 0xFF } },
            [0x3C, 0x08, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'b', 0x12, 0x34, 0xFF]
        },
        { "5.0 PUBACK success, reason code left out", V500, new PublishAckPacket(MqttPacketType.PubAck) { PacketId = 1 }, [0x40, 0x02, 0x00, 0x01] },
        {
            "5.0 PUBACK no matching subscribers", V500,
            new PublishAckPacket(MqttPacketType.PubAck) { PacketId = 1, ReasonCode = MqttReasonCode.NoMatchingSubscribers },
            [0x40, 0x03, 0x00, 0x01, 0x10]
        },
        { "3.1.1 PUBREC", V311, new PublishAckPacket(MqttPacketType.PubRec) { PacketId = 7 }, [0x50, 0x02, 0x00, 0x07] },
        { "3.1.1 PUBREL", V311, new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 7 }, [0x62, 0x02, 0x00, 0x07] },
        {
            "5.0 PUBCOMP packet identifier not found", V500,
            new PublishAckPacket(MqttPacketType.PubComp) { PacketId = 7, ReasonCode = MqttReasonCode.PacketIdentifierNotFound },
            [0x70, 0x03, 0x00, 0x07, 0x92]
        },
        {
            // 3.1.1 figure 3.22: "a/b" QoS 1 and "c/d" QoS 2, packet identifier 10.
            "3.1.1 SUBSCRIBE", V311,
            new SubscribePacket
            {
                PacketId = 10,
                Subscriptions = [new() { TopicFilter = "a/b", QoS = MqttQoS.AtLeastOnce }, new() { TopicFilter = "c/d", QoS = MqttQoS.ExactlyOnce }],
            },
            [0x82, 0x0E, 0x00, 0x0A, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'b', 0x01, 0x00, 0x03, (byte)'c', (byte)'/', (byte)'d', 0x02]
        },
        {
            // 5.0 figure 3-21 options byte: QoS 1, No Local, Retain As Published, Retain Handling 2 = 0b0010_1101.
            "5.0 SUBSCRIBE with options and a subscription identifier", V500,
            new SubscribePacket
            {
                PacketId = 1,
                Properties = new MqttProperties { SubscriptionIdentifiers = [1] },
                Subscriptions =
                [
                    new()
                    {
                        TopicFilter = "a/#", QoS = MqttQoS.AtLeastOnce, NoLocal = true, RetainAsPublished = true,
                        RetainHandling = MqttRetainHandling.DoNotSend,
                    },
                ],
            },
            [0x82, 0x0B, 0x00, 0x01, 0x02, 0x0B, 0x01, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'#', 0x2D]
        },
        {
            // 3.1.1 figure 3.26: granted QoS 0, granted QoS 2, failure.
            "3.1.1 SUBACK", V311,
            new SubAckPacket { PacketId = 10, ReasonCodes = [MqttReasonCode.GrantedQoS0, MqttReasonCode.GrantedQoS2, MqttReasonCode.UnspecifiedError] },
            [0x90, 0x05, 0x00, 0x0A, 0x00, 0x02, 0x80]
        },
        {
            "5.0 SUBACK", V500,
            new SubAckPacket { PacketId = 10, ReasonCodes = [MqttReasonCode.GrantedQoS1, MqttReasonCode.NotAuthorized] },
            [0x90, 0x05, 0x00, 0x0A, 0x00, 0x01, 0x87]
        },
        {
            "3.1.1 UNSUBSCRIBE", V311,
            new UnsubscribePacket { PacketId = 11, TopicFilters = ["a/b", "#"] },
            [0xA2, 0x0A, 0x00, 0x0B, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'b', 0x00, 0x01, (byte)'#']
        },
        { "3.1.1 UNSUBACK", V311, new UnsubAckPacket { PacketId = 11 }, [0xB0, 0x02, 0x00, 0x0B] },
        {
            "5.0 UNSUBACK no subscription existed", V500,
            new UnsubAckPacket { PacketId = 11, ReasonCodes = [MqttReasonCode.NoSubscriptionExisted] },
            [0xB0, 0x04, 0x00, 0x0B, 0x00, 0x11]
        },
        { "3.1.1 PINGREQ", V311, PingReqPacket.Instance, [0xC0, 0x00] },
        { "5.0 PINGRESP", V500, PingRespPacket.Instance, [0xD0, 0x00] },
        { "3.1.1 DISCONNECT", V311, new DisconnectPacket(), [0xE0, 0x00] },
        { "5.0 DISCONNECT normal, reason code left out", V500, new DisconnectPacket(), [0xE0, 0x00] },
        {
            "5.0 DISCONNECT with will message", V500,
            new DisconnectPacket { ReasonCode = MqttReasonCode.DisconnectWithWillMessage },
            [0xE0, 0x01, 0x04]
        },
        { "5.0 AUTH success, everything left out", V500, new AuthPacket(), [0xF0, 0x00] },
        {
            "5.0 AUTH continue with a method", V500,
            new AuthPacket { ReasonCode = MqttReasonCode.ContinueAuthentication, Properties = new MqttProperties { AuthenticationMethod = "SCRAM" } },
            [0xF0, 0x0A, 0x18, 0x08, 0x15, 0x00, 0x05, (byte)'S', (byte)'C', (byte)'R', (byte)'A', (byte)'M']
        },
        {
            // Section 3.15.2.1: AUTH keeps its property length after a reason code, even an empty one.
            "5.0 AUTH re-authenticate without properties", V500,
            new AuthPacket { ReasonCode = MqttReasonCode.ReAuthenticate },
            [0xF0, 0x02, 0x19, 0x00]
        },
    };

    [Theory]
    [MemberData(nameof(Golden))]
    public void Encoder_writes_the_bytes_the_standard_gives(string what, MqttProtocolVersion version, MqttPacket packet, byte[] expected)
    {
        Convert.ToHexString(Wire.Encode(packet, version)).ShouldBe(Convert.ToHexString(expected), what);
    }

    [Theory]
    [MemberData(nameof(Golden))]
    public void Decoder_reads_the_bytes_the_standard_gives(string what, MqttProtocolVersion version, MqttPacket packet, byte[] bytes)
    {
        PacketDescription.Of(Wire.DecodeSingle(bytes, version)).ShouldBe(PacketDescription.Of(packet), what);
    }

    [Fact]
    public void Decoder_reads_properties_in_any_order()
    {
        // The golden 5.0 PUBLISH with its properties reversed: "There is no significance in the order of
        // Properties with different Identifiers" (5.0, 2.2.2.2).
        byte[] bytes =
        [
            0x33, 0x2E,
            0x00, 0x03, (byte)'a', (byte)'/', (byte)'b',
            0x00, 0x0A,
            0x24,
            0x26, 0x00, 0x01, (byte)'k', 0x00, 0x01, (byte)'v',
            0x23, 0x00, 0x05,
            0x0B, 0xC8, 0x01,
            0x09, 0x00, 0x02, 0x01, 0x02,
            0x08, 0x00, 0x01, (byte)'r',
            0x03, 0x00, 0x04, (byte)'j', (byte)'s', (byte)'o', (byte)'n',
            0x02, 0x00, 0x00, 0x0E, 0x10,
            0x01, 0x01,
            (byte)'h', (byte)'i',
        ];
        var golden = Golden.Single(row => row.Data.Item1 == "5.0 PUBLISH QoS 1 retained with properties").Data;
        PacketDescription.Of(Wire.DecodeSingle(bytes, V500)).ShouldBe(PacketDescription.Of(golden.Item3));
    }

    [Theory]
    [InlineData(127, new byte[] { 0x30, 0x7F })]
    [InlineData(128, new byte[] { 0x30, 0x80, 0x01 })]
    [InlineData(16_383, new byte[] { 0x30, 0xFF, 0x7F })]
    [InlineData(16_384, new byte[] { 0x30, 0x80, 0x80, 0x01 })]
    [InlineData(2_097_151, new byte[] { 0x30, 0xFF, 0xFF, 0x7F })]
    [InlineData(2_097_152, new byte[] { 0x30, 0x80, 0x80, 0x80, 0x01 })]
    public void Remaining_length_is_encoded_as_the_standard_table_shows(int remainingLength, byte[] fixedHeader)
    {
        // 3.1.1 table 2.4 / 5.0 section 1.5.5: the edges of one, two, three and four byte lengths.
        var packet = new PublishPacket { Topic = "t", Payload = new byte[remainingLength - 3] };
        byte[] encoded = Wire.Encode(packet, V311);

        encoded[..fixedHeader.Length].ShouldBe(fixedHeader);
        encoded.Length.ShouldBe(fixedHeader.Length + remainingLength);
        ((PublishPacket)Wire.DecodeSingle(encoded, V311)).Payload.Length.ShouldBe(remainingLength - 3);
    }

    [Fact]
    public void Encoder_refuses_a_publish_too_large_for_a_four_byte_remaining_length()
    {
        // 268,435,455 is the largest remaining length (3.1.1 section 2.2.3, 5.0 section 1.5.5). A payload of
        // 257 MiB, built from one shared 1 MiB block so the test does not need the memory.
        var block = new byte[1 << 20];
        var payload = Chain(block, 257);
        payload.Length.ShouldBeGreaterThan(MqttFrameReader.MaxRemainingLength);

        var sink = new CountingWriter();
        Should.Throw<ArgumentException>(() =>
            MqttPacketEncoder.EncodePublish(sink, V311, "t", payload, MqttQoS.AtMostOnce, retain: false, dup: false, packetId: 0, properties: null));
        sink.Written.ShouldBe(0, "nothing of a packet that cannot be framed reaches the wire");
    }

    [Fact]
    public void Encoder_writes_a_publish_of_exactly_the_largest_remaining_length()
    {
        var block = new byte[1 << 20];
        int payloadLength = MqttFrameReader.MaxRemainingLength - 3; // topic "t" takes 3 bytes
        var payload = Chain(block, 256).Slice(0, payloadLength);
        var sink = new CountingWriter();

        int written = MqttPacketEncoder.EncodePublish(sink, V311, "t", payload, MqttQoS.AtMostOnce, retain: false, dup: false, packetId: 0, properties: null);

        written.ShouldBe(5 + MqttFrameReader.MaxRemainingLength);
        sink.Written.ShouldBe(written);
        sink.Head.ShouldBe([0x30, 0xFF, 0xFF, 0xFF, 0x7F]);
    }

    private static ReadOnlySequence<byte> Chain(byte[] block, int count)
    {
        var first = new ChainSegment(block, 0);
        var last = first;
        for (int i = 1; i < count; i++)
        {
            last = last.Append(block);
        }

        return new ReadOnlySequence<byte>(first, 0, last, block.Length);
    }

    private sealed class ChainSegment : ReadOnlySequenceSegment<byte>
    {
        public ChainSegment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public ChainSegment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new ChainSegment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }

    /// <summary>Counts what is written and keeps the first bytes; the rest goes nowhere.</summary>
    private sealed class CountingWriter : IBufferWriter<byte>
    {
        private readonly byte[] _scratch = new byte[1 << 20];

        public long Written { get; private set; }

        public byte[] Head { get; private set; } = [];

        public void Advance(int count)
        {
            if (Written == 0)
            {
                Head = _scratch[..Math.Min(count, 5)];
            }

            Written += count;
        }

        public Memory<byte> GetMemory(int sizeHint = 0) => _scratch;

        public Span<byte> GetSpan(int sizeHint = 0) => _scratch;
    }
}

using System.Buffers;
using System.Text;
using FsCheck;
using FsCheck.Fluent;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;
using static Saito.Mqtt.Tests.Codec.MalformedPacketTests;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Property-based, the FsCheck half of the fuzzing harness (benchmarks/Saito.Fuzz is the other): generators of
/// packets broken in the ways an attacker or a buggy hub breaks them, each held to the decoder's contract: it asks
/// for more bytes, returns packets, or raises <see cref="MqttProtocolException"/>, and nothing else. Where the
/// standard says the packet must be refused, the property says so too.
/// </summary>
public sealed class MalformedPacketFuzzProperties
{
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(400).WithQuietOnSuccess(true);

    /// <summary>Few runs: each input is tens of kilobytes.</summary>
    private static readonly Config FewRuns = Config.QuickThrowOnFailure.WithMaxTest(25).WithQuietOnSuccess(true);

    private static readonly Gen<MqttProtocolVersion> Version = Gen.Elements(PacketGenerators.Versions);

    /// <summary>Any packet of either version, encoded: the starting point for breaking it.</summary>
    private static readonly Gen<(MqttProtocolVersion Version, byte[] Bytes)> ValidPacket =
        from version in Version
        from packet in PacketGenerators.AnyPacket(version)
        select (version, Wire.Encode(packet, version));

    private static readonly Gen<byte[]> BadUtf8 = Gen.Elements<byte[]>(
        [0xC0, 0x80],                   // overlong U+0000
        [0xC1, 0xBF],                   // overlong
        [0xE0, 0x80, 0x80],             // overlong three-byte
        [0xED, 0xA0, 0x80],             // a surrogate (U+D800)
        [0xED, 0xBF, 0xBF],             // a surrogate (U+DFFF)
        [0xF4, 0x90, 0x80, 0x80],       // past U+10FFFF
        [0xF8, 0x88, 0x80, 0x80, 0x80], // a five-byte form
        [0xFF],
        [0x80],                         // a lone continuation byte
        [0xE2, 0x82],                   // cut short
        [0x00]);                        // U+0000 itself [MQTT-1.5.4-2]

    [Fact]
    public void Packets_whose_remaining_length_lies_raise_nothing_but_a_protocol_exception()
    {
        var lying =
            from valid in ValidPacket
            from change in Gen.OneOf(
                Gen.Choose(-300, 300).Where(d => d != 0).Select(d => (Func<int, byte[]>)(n => VariableByteInteger(Math.Max(0, n + d)))),
                Gen.Constant((Func<int, byte[]>)(n => [.. VariableByteInteger(n)[..^1], (byte)(VariableByteInteger(n)[^1] | 0x80), 0x00])), // not the shortest form
                Gen.Constant((Func<int, byte[]>)(_ => [0xFF, 0xFF, 0xFF, 0xFF, 0x7F])))                                                 // five bytes
            from trailer in Bytes(8)
            select (valid.Version, Body: BodyOf(valid.Bytes), Header: valid.Bytes[0], change, trailer);

        Check.One(Runs, Prop.ForAll(Arb.From(lying), c =>
            DecodesOrRefuses([c.Header, .. c.change(c.Body.Length), .. c.Body, .. c.trailer], c.Version)));
    }

    [Fact]
    public void Packets_cut_short_with_an_honest_remaining_length_raise_nothing_but_a_protocol_exception()
    {
        var truncated =
            from valid in ValidPacket
            let body = BodyOf(valid.Bytes)
            from keep in Gen.Choose(0, Math.Max(0, body.Length - 1))
            select (valid.Version, Packet: Packet(valid.Bytes[0], body[..keep]));

        Check.One(Runs, Prop.ForAll(Arb.From(truncated), c => DecodesOrRefuses(c.Packet, c.Version)));
    }

    [Fact]
    public void A_string_that_is_not_well_formed_utf8_is_refused_as_malformed_wherever_it_is()
    {
        var badString =
            from version in Version
            from bad in BadUtf8
            from before in Gen.Elements("", "saito/", "a")
            from place in Gen.Choose(0, 5)
            let text = (byte[])[.. Encoding.UTF8.GetBytes(before), .. bad, (byte)'x']
            let field = (byte[])[.. U16(text.Length), .. text]
            let props = version == MqttProtocolVersion.V500 ? new byte[] { 0 } : []
            select (version, Packet: place switch
            {
                0 => Packet(0x30, field, props),                                                                        // PUBLISH topic
                1 => Packet(0x10, Str("MQTT"), [(byte)version, 0x02, 0, 60], props, field),                             // client id
                2 => Packet(0x82, U16(1), props, field, [0x01]),                                                        // topic filter
                3 => Packet(0xA2, U16(1), props, Str("a/b"), field),                                                    // second unsubscribe filter
                4 => Packet(0x10, Str("MQTT"), [(byte)version, 0x82, 0, 60], props, Str("c"), field),                   // user name
                _ => version == MqttProtocolVersion.V500
                    ? Packet(0x30, Str("t"), Properties([(byte)MqttPropertyId.UserProperty, .. Str("k"), .. field]))         // user property value
                    : Packet(0x30, field),
            });

        Check.One(Runs, Prop.ForAll(Arb.From(badString), c =>
            Wire.Refuse(c.Packet, c.version).ReasonCode.ShouldBe(MqttReasonCode.MalformedPacket)));
    }

    [Fact]
    public void A_property_length_past_the_end_of_the_packet_is_refused_as_malformed()
    {
        var huge =
            from declared in Gen.Frequency(
                (1, Gen.Elements(268_435_455, 2_097_152, 16_384, 128)),
                (3, Gen.Choose(1, 268_435_455)))
            from place in Gen.Choose(0, 4)
            from payload in Bytes(16)
            let props = (byte[])[.. VariableByteInteger(declared), 0x26, .. Str("k"), .. Str("v")]
            where declared > 7 + payload.Length
            select place switch
            {
                0 => Packet(0x30, Str("saito/t"), props, payload),                                 // PUBLISH
                1 => Packet(0x10, Str("MQTT"), new byte[] { 5, 0x02, 0, 60 }, props, Str("c"), payload),        // CONNECT
                2 => Packet(0x82, U16(1), props, Str("a/#"), [0x01], payload),                     // SUBSCRIBE
                3 => Packet(0x40, U16(1), [0x10], props, payload),                                 // PUBACK
                _ => Packet(0xE0, [0x00], props, payload),                                         // DISCONNECT
            };

        Check.One(Runs, Prop.ForAll(Arb.From(huge), bytes =>
            Wire.Refuse(bytes, MqttProtocolVersion.V500).ReasonCode.ShouldBe(MqttReasonCode.MalformedPacket)));
    }

    [Fact]
    public void A_field_that_runs_past_its_property_length_is_refused_as_malformed()
    {
        var overrun =
            from property in Gen.Elements<byte[]>([0x03, .. Str("application/json")], [0x08, .. Str("r/t")], [0x09, .. U16(4), 1, 2, 3, 4], [0x02, 0, 0, 0, 9])
            from declared in Gen.Choose(1, property.Length - 1)
            select Packet(0x30, Str("saito/t"), VariableByteInteger(declared), property, "payload"u8.ToArray());

        Check.One(Runs, Prop.ForAll(Arb.From(overrun), bytes =>
            Wire.Refuse(bytes, MqttProtocolVersion.V500).ReasonCode.ShouldBe(MqttReasonCode.MalformedPacket)));
    }

    [Fact]
    public void A_property_given_twice_is_refused_as_a_protocol_error()
    {
        byte[][] publishOnce = [[0x01, 0x01], [0x02, 0, 0, 0, 5], [0x03, .. Str("a")], [0x08, .. Str("r")], [0x09, .. U16(1), 7], [0x23, 0, 1]];
        byte[][] connectOnce = [[0x11, 0, 0, 0, 5], [0x21, 0, 1], [0x22, 0, 1], [0x27, 0, 0, 0, 9], [0x17, 1], [0x19, 0]];
        var twice =
            from inConnect in Gen.Elements(false, true)
            from property in Gen.Elements(inConnect ? connectOnce : publishOnce)
            from users in Gen.Choose(0, 3)
            from second in Gen.Elements(property, [.. property[..^1], (byte)(property[^1] + 1)]) // the same value again, or another
            let user = (byte[])[0x26, .. Str("k"), .. Str("v")]
            let all = (byte[])[.. property, .. Enumerable.Repeat(user, users).SelectMany(u => u), .. second]
            select inConnect
                ? Packet(0x10, Str("MQTT"), new byte[] { 5, 0x02, 0, 60 }, Properties(all), Str("c"))
                : Packet(0x30, Str("saito/t"), Properties(all), "{}"u8.ToArray());

        Check.One(Runs, Prop.ForAll(Arb.From(twice), bytes =>
            Wire.Refuse(bytes, MqttProtocolVersion.V500).ReasonCode.ShouldBe(MqttReasonCode.ProtocolError)));
    }

    [Fact]
    public void A_fixed_header_with_reserved_flags_is_refused_as_malformed_and_nothing_else_is_refused_for_its_flags()
    {
        var headers =
            from version in Version
            from header in Gen.Choose(0x10, 0xFF).Select(h => (byte)h)
            from body in Bytes(24)
            select (version, header, body);

        Check.One(Runs, Prop.ForAll(Arb.From(headers), c =>
        {
            byte[] bytes = Packet(c.header, c.body);
            if (FlagsAllowed(c.header))
            {
                DecodesOrRefuses(bytes, c.version);
            }
            else
            {
                var buffer = new ReadOnlySequence<byte>(bytes);
                Should.Throw<MqttProtocolException>(() => MqttFrameReader.TryRead(ref buffer, Wire.NoLimit, out _))
                    .ReasonCode.ShouldBe(MqttReasonCode.MalformedPacket);
            }
        }));
    }

    [Fact]
    public void Topic_filters_of_tens_of_thousands_of_levels_decode_and_are_checked_without_recursion()
    {
        var deep =
            from version in Version
            from level in Gen.Elements("a", "+", "")
            from levels in Gen.Choose(10_000, 32_000)
            from multi in Gen.Elements(false, true)
            from unsubscribe in Gen.Elements(false, true)
            let filter = string.Join('/', Enumerable.Repeat(level, levels)) + (multi ? "/#" : string.Empty)
            select (version, level, filter, unsubscribe);

        Check.One(FewRuns, Prop.ForAll(Arb.From(deep), c =>
        {
            byte[] props = c.version == MqttProtocolVersion.V500 ? [0] : [];
            var decoded = c.unsubscribe
                ? ((UnsubscribePacket)Wire.DecodeSingle(Packet(0xA2, U16(1), props, Str(c.filter)), c.version)).TopicFilters.ShouldHaveSingleItem()
                : ((SubscribePacket)Wire.DecodeSingle(Packet(0x82, U16(1), props, Str(c.filter), [0x01]), c.version)).Subscriptions.ShouldHaveSingleItem().TopicFilter;

            decoded.ShouldBe(c.filter);
            MqttTopic.IsValidFilter(decoded).ShouldBeTrue();
            MqttTopic.TryParseShared("$share/g/" + decoded, out _, out string inner, out bool valid).ShouldBeTrue();
            valid.ShouldBeTrue();
            inner.ShouldBe(decoded);
            string topic = string.Join('/', Enumerable.Repeat("a", c.filter.Count(ch => ch == '/') + 1));
            MqttTopic.Matches(decoded, topic).ShouldBe(c.level.Length > 0, "an empty level matches only an empty level");
        }));
    }

    /// <summary>The decoder's contract: more bytes wanted, packets, or a protocol exception; nothing else.</summary>
    private static void DecodesOrRefuses(byte[] bytes, MqttProtocolVersion version)
    {
        try
        {
            Wire.DecodeAll(new ReadOnlySequence<byte>(bytes), version);
        }
        catch (MqttProtocolException)
        {
            // Refused: the connection closes. The documented outcome for bad bytes.
        }
    }

    /// <summary>Sections 2.1.3 (both versions): the flags each packet type may carry.</summary>
    private static bool FlagsAllowed(byte header)
    {
        int type = header >> 4;
        int flags = header & 0x0F;
        int qos = (flags >> 1) & 0x03;
        return type switch
        {
            3 => qos != 3 && !(qos == 0 && (flags & 0x08) != 0), // PUBLISH: QoS 3 is malformed, and DUP needs QoS > 0 [MQTT-3.3.1-2]
            6 or 8 or 10 => flags == 0x02,                      // PUBREL, SUBSCRIBE, UNSUBSCRIBE
            _ => flags == 0,
        };
    }

    /// <summary>The body of an encoded packet: after the first byte and the remaining length.</summary>
    private static byte[] BodyOf(byte[] packet)
    {
        int i = 1;
        while ((packet[i] & 0x80) != 0)
        {
            i++;
        }

        return packet[(i + 1)..];
    }

    /// <summary>Zero to <paramref name="max"/> random bytes.</summary>
    private static Gen<byte[]> Bytes(int max) => Gen.Choose(0, max).SelectMany(n => Gen.ArrayOf(Gen.Choose(0, 255).Select(b => (byte)b), n));

    private static byte[] Properties(byte[] all) => [.. VariableByteInteger(all.Length), .. all];
}

using System.Buffers;
using FsCheck;
using FsCheck.Fluent;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Property-based: bad bytes never bring the codec down. Whatever arrives, the frame reader and the
/// decoder either ask for more data, return a packet, or raise <see cref="MqttProtocolException"/>;
/// and whatever they accept, the encoder can write back and the decoder reads the same again.
/// </summary>
public sealed class RobustnessTests
{
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(3_000).WithQuietOnSuccess(true);

    private static readonly Gen<byte> AnyByte = Gen.Choose(0, 255).Select(b => (byte)b);

    /// <summary>First bytes of real fixed headers, so random bodies get past the fixed header often.</summary>
    private static readonly Gen<byte> PlausibleHeader = Gen.Elements<byte>(
        0x10, 0x20, 0x30, 0x31, 0x32, 0x33, 0x34, 0x3A, 0x3D, 0x40, 0x50, 0x62, 0x70, 0x82, 0x90, 0xA2, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0);

    private static readonly Gen<byte[]> RandomBytes = Gen.Frequency(
        (1, Gen.Sized(size => Gen.Choose(0, Math.Max(1, size * 2))).SelectMany(n => Gen.ArrayOf(AnyByte, n))),
        (3, from header in PlausibleHeader
            from body in Gen.Choose(0, 80).SelectMany(n => Gen.ArrayOf(AnyByte, n))
            select (byte[])[header, (byte)Math.Min(body.Length, 127), .. body]));

    [Theory]
    [MemberData(nameof(Versions))]
    public void Random_bytes_raise_nothing_but_a_protocol_exception(MqttProtocolVersion version)
    {
        Check.One(Runs, Prop.ForAll(Arb.From(RandomBytes), bytes => DecodeTolerantly(bytes, version)));
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public void Mutated_valid_packets_raise_nothing_but_a_protocol_exception(MqttProtocolVersion version)
    {
        var mutated =
            from packet in PacketGenerators.AnyPacket(version)
            let bytes = Wire.Encode(packet, version)
            from mutations in Gen.Choose(1, 3).SelectMany(n => Gen.ListOf(Mutation(), n))
            select mutations.Aggregate(bytes, (b, mutate) => mutate(b));

        Check.One(Runs, Prop.ForAll(Arb.From(mutated), bytes => DecodeTolerantly(bytes, version)));
    }

    [Fact]
    public void The_topic_cache_holds_at_most_its_character_budget_however_long_the_topics()
    {
        var cache = new MqttTopicCache(capacity: 1000, maxChars: 10_000);
        for (int i = 0; i < 100; i++)
        {
            string topic = new string('x', 1000) + i.ToString(System.Globalization.CultureInfo.InvariantCulture);
            cache.GetOrAdd(topic).ShouldBe(topic, "an uncached topic is still returned whole");
        }

        cache.Chars.ShouldBeLessThanOrEqualTo(10_000);
        cache.Count.ShouldBe(9);
        ReferenceEquals(cache.GetOrAdd("x"), cache.GetOrAdd("x")).ShouldBeTrue("short topics still fit and are interned");
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public void Mutated_publish_on_the_copy_free_path_raises_nothing_but_a_protocol_exception(MqttProtocolVersion version)
    {
        var cache = new MqttTopicCache(capacity: 64);
        var mutated =
            from packet in PacketGenerators.Publish(version)
            let bytes = Wire.Encode(packet, version)
            from mutations in Gen.Choose(1, 3).SelectMany(n => Gen.ListOf(Mutation(), n))
            select mutations.Aggregate(bytes, (b, mutate) => mutate(b));

        Check.One(Runs, Prop.ForAll(Arb.From(mutated), bytes =>
        {
            var buffer = new ReadOnlySequence<byte>(bytes);
            try
            {
                while (MqttFrameReader.TryRead(ref buffer, Wire.NoLimit, out var frame))
                {
                    if (frame.Type == MqttPacketType.Publish)
                    {
                        _ = MqttPacketDecoder.DecodePublish(frame, version, cache);
                    }
                }
            }
            catch (MqttProtocolException)
            {
                // Refused: the only acceptable failure.
            }
        }));
    }

    /// <summary>
    /// Frames and decodes everything; a protocol exception ends it (the connection would close).
    /// Each packet the decoder accepts must encode again and decode to the same fields.
    /// </summary>
    private static void DecodeTolerantly(byte[] bytes, MqttProtocolVersion version)
    {
        var buffer = new ReadOnlySequence<byte>(bytes);
        while (true)
        {
            MqttPacket packet;
            try
            {
                if (!MqttFrameReader.TryRead(ref buffer, 64 * 1024, out var frame))
                {
                    return;
                }

                packet = MqttPacketDecoder.Decode(frame, version);
            }
            catch (MqttProtocolException)
            {
                return;
            }

            var again = Wire.DecodeSingle(Wire.Encode(packet, version), version);
            PacketDescription.Of(again).ShouldBe(PacketDescription.Of(packet));
        }
    }

    private static Gen<Func<byte[], byte[]>> Mutation() => Gen.OneOf(
        // Flip one bit.
        from at in Gen.Choose(0, int.MaxValue)
        from bit in Gen.Choose(0, 7)
        select (Func<byte[], byte[]>)(b => b.Length == 0 ? b : With(b, at % b.Length, (byte)(b[at % b.Length] ^ (1 << bit)))),

        // Overwrite one byte.
        from at in Gen.Choose(0, int.MaxValue)
        from value in AnyByte
        select (Func<byte[], byte[]>)(b => b.Length == 0 ? b : With(b, at % b.Length, value)),

        // Cut the packet short.
        from at in Gen.Choose(0, int.MaxValue)
        select (Func<byte[], byte[]>)(b => b.Length == 0 ? b : b[..(at % b.Length)]),

        // Insert a byte (the remaining length then lies or the fields shift).
        from at in Gen.Choose(0, int.MaxValue)
        from value in AnyByte
        select (Func<byte[], byte[]>)(b => [.. b[..(at % (b.Length + 1))], value, .. b[(at % (b.Length + 1))..]]),

        // Delete a byte.
        from at in Gen.Choose(0, int.MaxValue)
        select (Func<byte[], byte[]>)(b => b.Length == 0 ? b : [.. b[..(at % b.Length)], .. b[((at % b.Length) + 1)..]]),

        // Append junk after the packet.
        from junk in Gen.Choose(1, 8).SelectMany(n => Gen.ArrayOf(AnyByte, n))
        select (Func<byte[], byte[]>)(b => [.. b, .. junk]));

    private static byte[] With(byte[] bytes, int index, byte value)
    {
        var copy = (byte[])bytes.Clone();
        copy[index] = value;
        return copy;
    }

    public static TheoryData<MqttProtocolVersion> Versions() => new(PacketGenerators.Versions);
}

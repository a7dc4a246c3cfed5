using System.Buffers;
using FsCheck;
using FsCheck.Fluent;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Property-based: every packet the standard allows, in both protocol versions, survives
/// encode → frame-read → decode → encode byte for byte with every field intact, however the
/// bytes are cut into segments on the way in.
/// </summary>
public sealed class RoundTripTests
{
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(300).WithQuietOnSuccess(true);

    public static TheoryData<MqttPacketType, MqttProtocolVersion> EveryPacketTypeOfEveryVersion()
    {
        var data = new TheoryData<MqttPacketType, MqttProtocolVersion>();
        foreach (var version in PacketGenerators.Versions)
        {
            foreach (var type in PacketGenerators.TypesOf(version))
            {
                data.Add(type, version);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(EveryPacketTypeOfEveryVersion))]
    public void Packet_survives_encode_frame_decode_encode_byte_for_byte(MqttPacketType type, MqttProtocolVersion version)
    {
        Check.One(Runs, Prop.ForAll(Arb.From(PacketGenerators.Packet(type, version)), packet =>
        {
            byte[] encoded = Wire.Encode(packet, version);
            var decoded = Wire.DecodeSingle(encoded, version);

            decoded.Type.ShouldBe(type);
            PacketDescription.Of(decoded).ShouldBe(PacketDescription.Of(packet));
            Wire.Encode(decoded, version).ShouldBe(encoded);
        }));
    }

    [Theory]
    [MemberData(nameof(EveryPacketTypeOfEveryVersion))]
    public void Packet_cut_into_two_segments_at_every_byte_decodes_to_the_same_packet(MqttPacketType type, MqttProtocolVersion version)
    {
        Check.One(Runs.WithMaxTest(60), Prop.ForAll(Arb.From(PacketGenerators.Packet(type, version)), packet =>
        {
            byte[] encoded = Wire.Encode(packet, version);
            string expected = PacketDescription.Of(packet);
            for (int cut = 0; cut <= encoded.Length; cut++)
            {
                var decoded = Wire.DecodeSingle(Wire.Segmented(encoded, cut), version);
                PacketDescription.Of(decoded).ShouldBe(expected, $"cut at byte {cut}");
                Wire.Encode(decoded, version).ShouldBe(encoded, $"cut at byte {cut}");
            }
        }));
    }

    [Theory]
    [MemberData(nameof(EveryPacketTypeOfEveryVersion))]
    public void Packet_arriving_a_piece_at_a_time_needs_more_data_until_its_last_byte(MqttPacketType type, MqttProtocolVersion version)
    {
        Check.One(Runs.WithMaxTest(60), Prop.ForAll(Arb.From(PacketGenerators.Packet(type, version)), packet =>
        {
            byte[] encoded = Wire.Encode(packet, version);
            for (int received = 0; received < encoded.Length; received++)
            {
                var partial = Wire.Segmented(encoded.AsSpan(0, received), received / 2);
                var before = partial;
                MqttFrameReader.TryRead(ref partial, Wire.NoLimit, out _).ShouldBeFalse($"only {received} of {encoded.Length} bytes are in");
                partial.ShouldBe(before, "a partial packet leaves the buffer untouched");
            }
        }));
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public void Packets_back_to_back_in_many_segments_decode_one_after_another(MqttProtocolVersion version)
    {
        var batches =
            from packets in Gen.Choose(1, 6).SelectMany(n => Gen.ListOf(PacketGenerators.AnyPacket(version), n))
            let bytes = packets.SelectMany(p => Wire.Encode(p, version)).ToArray()
            from cuts in Gen.Choose(0, 8).SelectMany(n => Gen.ListOf(Gen.Choose(0, bytes.Length), n))
            select (packets, bytes, cuts: cuts.Order().ToArray());

        Check.One(Runs, Prop.ForAll(Arb.From(batches), batch =>
        {
            var buffer = Wire.Segmented(batch.bytes, batch.cuts);
            var (decoded, needsMore) = Wire.DecodeAll(buffer, version);
            needsMore.ShouldBeFalse();
            decoded.Select(PacketDescription.Of).ShouldBe(batch.packets.Select(PacketDescription.Of));
        }));
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public void Publish_decoded_without_copying_matches_the_publish_that_was_encoded(MqttProtocolVersion version)
    {
        var cache = new MqttTopicCache();
        var cases =
            from packet in PacketGenerators.Publish(version)
            let bytes = Wire.Encode(packet, version)
            from cuts in Gen.Choose(0, 4).SelectMany(n => Gen.ListOf(Gen.Choose(0, bytes.Length), n))
            select (packet, bytes, cuts: cuts.Order().ToArray());

        Check.One(Runs, Prop.ForAll(Arb.From(cases), c =>
        {
            var buffer = Wire.Segmented(c.bytes, c.cuts);
            MqttFrameReader.TryRead(ref buffer, Wire.NoLimit, out var frame).ShouldBeTrue();
            var publish = MqttPacketDecoder.DecodePublish(frame, version, cache);

            PacketDescription.Of(publish).ShouldBe(PacketDescription.Of(c.packet));
            var writer = new ArrayBufferWriter<byte>();
            int written = MqttPacketEncoder.EncodePublish(writer, version, publish.Topic, publish.Payload, publish.QoS, publish.Retain,
                publish.Dup, publish.PacketId, publish.Properties);
            writer.WrittenSpan.ToArray().ShouldBe(c.bytes);
            written.ShouldBe(c.bytes.Length);
            MqttPacketEncoder.PublishSize(version, publish.Topic, publish.Payload.Length, publish.QoS, publish.Properties).ShouldBe(c.bytes.Length);
        }));
    }

    [Fact]
    public void Long_topic_and_payload_cut_at_every_byte_decode_to_the_same_publish()
    {
        // A topic longer than 256 bytes takes the decoder's pooled-buffer path when it spans segments.
        var packet = new PublishPacket
        {
            Topic = string.Concat(Enumerable.Repeat("sensors/ü水😀/", 40)) + "end",
            QoS = MqttQoS.ExactlyOnce,
            PacketId = 0xBEEF,
            Payload = Enumerable.Range(0, 300).Select(i => (byte)i).ToArray(),
            Properties = new MqttProperties { ContentType = "application/json", UserProperties = [new("unit", "°C")] },
        };
        foreach (var version in PacketGenerators.Versions)
        {
            if (version == MqttProtocolVersion.V311)
            {
                packet.Properties = null;
            }

            byte[] encoded = Wire.Encode(packet, version);
            for (int cut = 0; cut <= encoded.Length; cut++)
            {
                var decoded = Wire.DecodeSingle(Wire.Segmented(encoded, cut / 3, cut), version, new MqttTopicCache());
                PacketDescription.Of(decoded).ShouldBe(PacketDescription.Of(packet));
            }
        }
    }

    public static TheoryData<MqttProtocolVersion> Versions() => new(PacketGenerators.Versions);
}

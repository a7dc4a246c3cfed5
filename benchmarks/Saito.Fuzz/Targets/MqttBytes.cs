using System.Buffers;
using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Fuzz.Targets;

/// <summary>Raw MQTT bytes, put together by hand where the encoder (rightly) refuses to write them.</summary>
internal static class MqttBytes
{
    public static byte[] Encode(MqttPacket packet, MqttProtocolVersion version)
    {
        var writer = new ArrayBufferWriter<byte>();
        MqttPacketEncoder.Encode(writer, packet, version);
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>A fixed header (with an honest remaining length) and the body.</summary>
    public static byte[] Packet(byte header, params byte[][] parts)
    {
        byte[] body = [.. parts.SelectMany(p => p)];
        return [header, .. VariableByteInteger(body.Length), .. body];
    }

    /// <summary>Section 1.5.5; values past 268,435,455 are written in five bytes on purpose (malformed).</summary>
    public static byte[] VariableByteInteger(long value)
    {
        var bytes = new List<byte>(5);
        do
        {
            byte b = (byte)(value % 128);
            value /= 128;
            bytes.Add(value > 0 ? (byte)(b | 0x80) : b);
        }
        while (value > 0);
        return [.. bytes];
    }

    public static byte[] UInt16(int value) => [(byte)(value >> 8), (byte)value];

    public static byte[] String(string text) => Utf8String(Encoding.UTF8.GetBytes(text));

    /// <summary>A length-prefixed string of any bytes (bad UTF-8 included); the length is cut to 16 bits as the wire does.</summary>
    public static byte[] Utf8String(byte[] utf8) => [.. UInt16(utf8.Length), .. utf8];

    /// <summary>A 5.0 property block: its length, then the properties.</summary>
    public static byte[] Properties(params byte[][] properties)
    {
        byte[] all = [.. properties.SelectMany(p => p)];
        return [.. VariableByteInteger(all.Length), .. all];
    }

    public static byte[] UserProperty(string name, string value) => [(byte)MqttPropertyId.UserProperty, .. String(name), .. String(value)];
}

namespace Saito.Testing;

/// <summary>
/// Bytes of a QoS 0 PUBLISH on topic "t" as a slow or hostile client sends them (issue 32, item 6): the fixed header
/// announces the whole packet, and only the first bytes are sent. The rest of the payload is a pattern, so a reader that
/// hands out the wrong bytes is caught.
/// </summary>
public static class UnfinishedPublish
{
    /// <summary>The whole PUBLISH of <paramref name="size"/> bytes.</summary>
    public static byte[] Whole(int size) => Beginning(size, size);

    /// <summary>The first <paramref name="sent"/> bytes of a PUBLISH of <paramref name="announced"/> bytes in all (16 KiB to 2 MiB: a three-byte remaining length).</summary>
    public static byte[] Beginning(int announced, int sent)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(announced, (16 * 1024) + 4);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(announced, (2 * 1024 * 1024) + 3);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(sent, announced);
        ArgumentOutOfRangeException.ThrowIfLessThan(sent, 7);
        int remaining = announced - 4;
        var bytes = new byte[sent];
        for (int i = 7; i < sent; i++)
        {
            bytes[i] = (byte)(i * 31);
        }

        bytes[0] = 0x30;
        bytes[1] = (byte)((remaining & 0x7F) | 0x80);
        bytes[2] = (byte)(((remaining >> 7) & 0x7F) | 0x80);
        bytes[3] = (byte)(remaining >> 14);
        bytes[4] = 0;
        bytes[5] = 1;
        bytes[6] = (byte)'t';
        return bytes;
    }
}

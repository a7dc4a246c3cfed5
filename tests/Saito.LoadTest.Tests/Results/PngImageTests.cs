using System.Buffers.Binary;
using System.IO.Compression;
using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>The decoder the chart checks rely on: it must tell a blank image from a drawn one, or those checks prove nothing.</summary>
public sealed class PngImageTests
{
    [Fact]
    public void A_uniform_image_has_one_colour_and_no_ink()
    {
        var image = PngImage.Decode(Png(40, 30, (_, _) => (255, 255, 255)));

        image.Width.ShouldBe(40);
        image.Height.ShouldBe(30);
        image.DistinctColours().ShouldBe(1);
        image.InkFraction().ShouldBe(0);
    }

    [Fact]
    public void Every_filter_type_decodes_to_the_pixels_that_were_encoded()
    {
        static (byte R, byte G, byte B) Colour(int x, int y) => ((byte)(x * 7), (byte)(y * 11), (byte)((x * y) % 251));

        var image = PngImage.Decode(Png(25, 10, Colour));

        for (int y = 0; y < 10; y++)
        {
            for (int x = 0; x < 25; x++)
            {
                var (r, g, b) = Colour(x, y);
                image.Pixel(x, y).ShouldBe(((uint)r << 24) | ((uint)g << 16) | ((uint)b << 8) | 0xFF, $"pixel {x},{y} (filter {y % 5})");
            }
        }

        image.DistinctColours().ShouldBeGreaterThan(100);
    }

    [Fact]
    public void Something_that_is_not_a_png_is_refused()
    {
        Should.Throw<InvalidDataException>(() => PngImage.Decode("<html>not a picture</html>"u8.ToArray()));
    }

    /// <summary>An 8-bit RGB PNG whose line y uses filter y % 5, so every filter is exercised.</summary>
    private static byte[] Png(int width, int height, Func<int, int, (byte R, byte G, byte B)> colour)
    {
        int stride = width * 3;
        var pixels = new byte[height][];
        for (int y = 0; y < height; y++)
        {
            pixels[y] = new byte[stride];
            for (int x = 0; x < width; x++)
            {
                var (r, g, b) = colour(x, y);
                (pixels[y][x * 3], pixels[y][(x * 3) + 1], pixels[y][(x * 3) + 2]) = (r, g, b);
            }
        }

        using var raw = new MemoryStream();
        using (var zlib = new ZLibStream(raw, CompressionLevel.Optimal, leaveOpen: true))
        {
            for (int y = 0; y < height; y++)
            {
                int filter = y % 5;
                zlib.WriteByte((byte)filter);
                for (int i = 0; i < stride; i++)
                {
                    int left = i >= 3 ? pixels[y][i - 3] : 0;
                    int up = y > 0 ? pixels[y - 1][i] : 0;
                    int corner = i >= 3 && y > 0 ? pixels[y - 1][i - 3] : 0;
                    int predicted = filter switch { 0 => 0, 1 => left, 2 => up, 3 => (left + up) / 2, _ => Paeth(left, up, corner) };
                    zlib.WriteByte((byte)(pixels[y][i] - predicted));
                }
            }
        }

        using var png = new MemoryStream();
        png.Write([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]);
        var header = new byte[13];
        BinaryPrimitives.WriteInt32BigEndian(header, width);
        BinaryPrimitives.WriteInt32BigEndian(header.AsSpan(4), height);
        header[8] = 8; // bit depth
        header[9] = 2; // RGB
        Chunk(png, "IHDR", header);
        Chunk(png, "IDAT", raw.ToArray());
        Chunk(png, "IEND", []);
        return png.ToArray();
    }

    private static void Chunk(Stream png, string type, byte[] data)
    {
        var length = new byte[4];
        BinaryPrimitives.WriteInt32BigEndian(length, data.Length);
        png.Write(length);
        png.Write(System.Text.Encoding.ASCII.GetBytes(type));
        png.Write(data);
        png.Write(new byte[4]); // CRC: the decoder does not check it
    }

    private static int Paeth(int a, int b, int c)
    {
        int p = a + b - c;
        int pa = Math.Abs(p - a), pb = Math.Abs(p - b), pc = Math.Abs(p - c);
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
}

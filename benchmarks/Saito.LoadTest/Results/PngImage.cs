using System.Buffers.Binary;
using System.IO.Compression;

namespace Saito.LoadTest.Results;

/// <summary>
/// Just enough of a PNG decoder to check what Chromium drew: size, and how many colours (a blank page has one).
/// 8-bit greyscale, grey+alpha, RGB and RGBA, not interlaced: what browsers write for screenshots.
/// </summary>
internal sealed class PngImage
{
    private static readonly byte[] Signature = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];

    private readonly byte[] pixels;
    private readonly int channels;

    private PngImage(int width, int height, int channels, byte[] pixels)
    {
        Width = width;
        Height = height;
        this.channels = channels;
        this.pixels = pixels;
    }

    public int Width { get; }

    public int Height { get; }

    public static PngImage Read(string path) => Decode(File.ReadAllBytes(path));

    public static PngImage Decode(byte[] png)
    {
        ArgumentNullException.ThrowIfNull(png);
        if (png.Length < Signature.Length || !png.AsSpan(0, Signature.Length).SequenceEqual(Signature))
        {
            throw new InvalidDataException("Not a PNG: the 8-byte signature is missing.");
        }

        int width = 0, height = 0, channels = 0;
        using var idat = new MemoryStream();
        int at = Signature.Length;
        bool ended = false;
        while (!ended)
        {
            if (at + 12 > png.Length)
            {
                throw new InvalidDataException("Truncated PNG: no IEND chunk.");
            }

            int length = BinaryPrimitives.ReadInt32BigEndian(png.AsSpan(at));
            string type = System.Text.Encoding.ASCII.GetString(png, at + 4, 4);
            if (length < 0 || at + 12 + length > png.Length)
            {
                throw new InvalidDataException($"Truncated PNG: chunk {type} runs past the end.");
            }

            var data = png.AsSpan(at + 8, length);
            switch (type)
            {
                case "IHDR":
                    width = BinaryPrimitives.ReadInt32BigEndian(data);
                    height = BinaryPrimitives.ReadInt32BigEndian(data[4..]);
                    byte depth = data[8], colourType = data[9], interlace = data[12];
                    channels = colourType switch { 0 => 1, 2 => 3, 4 => 2, 6 => 4, _ => 0 };
                    if (depth != 8 || channels == 0 || interlace != 0 || width <= 0 || height <= 0)
                    {
                        throw new InvalidDataException($"Unsupported PNG: {width}x{height}, bit depth {depth}, colour type {colourType}, interlace {interlace}.");
                    }

                    break;
                case "IDAT":
                    idat.Write(data);
                    break;
                case "IEND":
                    ended = true;
                    break;
            }

            at += 12 + length;
        }

        if (channels == 0)
        {
            throw new InvalidDataException("PNG without an IHDR chunk.");
        }

        int stride = width * channels;
        var raw = new byte[(stride + 1) * height];
        idat.Position = 0;
        using (var zlib = new ZLibStream(idat, CompressionMode.Decompress))
        {
            zlib.ReadExactly(raw);
        }

        var pixels = new byte[stride * height];
        for (int y = 0; y < height; y++)
        {
            byte filter = raw[y * (stride + 1)];
            var line = raw.AsSpan((y * (stride + 1)) + 1, stride);
            var output = pixels.AsSpan(y * stride, stride);
            var above = y > 0 ? pixels.AsSpan((y - 1) * stride, stride) : new byte[stride];
            for (int i = 0; i < stride; i++)
            {
                int left = i >= channels ? output[i - channels] : 0;
                int up = above[i];
                int corner = i >= channels ? above[i - channels] : 0;
                int predicted = filter switch
                {
                    0 => 0,
                    1 => left,
                    2 => up,
                    3 => (left + up) / 2,
                    4 => Paeth(left, up, corner),
                    _ => throw new InvalidDataException($"Unknown PNG filter {filter} on line {y}."),
                };
                output[i] = (byte)(line[i] + predicted);
            }
        }

        return new PngImage(width, height, channels, pixels);
    }

    /// <summary>The pixel as 0xRRGGBBAA.</summary>
    public uint Pixel(int x, int y)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(x);
        ArgumentOutOfRangeException.ThrowIfNegative(y);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(x, Width);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(y, Height);
        int at = ((y * Width) + x) * channels;
        return channels switch
        {
            1 => Rgba(pixels[at], pixels[at], pixels[at], 255),
            2 => Rgba(pixels[at], pixels[at], pixels[at], pixels[at + 1]),
            3 => Rgba(pixels[at], pixels[at + 1], pixels[at + 2], 255),
            _ => Rgba(pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3]),
        };
    }

    /// <summary>How many different colours the image has, counting up to <paramref name="limit"/>.</summary>
    public int DistinctColours(int limit = int.MaxValue)
    {
        var seen = new HashSet<uint>();
        for (int y = 0; y < Height; y++)
        {
            for (int x = 0; x < Width; x++)
            {
                if (seen.Add(Pixel(x, y)) && seen.Count >= limit)
                {
                    return seen.Count;
                }
            }
        }

        return seen.Count;
    }

    /// <summary>The share of pixels that are not the most common colour (the background): 0 for a blank image.</summary>
    public double InkFraction()
    {
        var counts = new Dictionary<uint, int>();
        for (int y = 0; y < Height; y++)
        {
            for (int x = 0; x < Width; x++)
            {
                uint p = Pixel(x, y);
                counts[p] = counts.GetValueOrDefault(p) + 1;
            }
        }

        return 1 - (counts.Values.Max() / (double)(Width * Height));
    }

    private static uint Rgba(byte r, byte g, byte b, byte a) => ((uint)r << 24) | ((uint)g << 16) | ((uint)b << 8) | a;

    private static int Paeth(int a, int b, int c)
    {
        int p = a + b - c;
        int pa = Math.Abs(p - a), pb = Math.Abs(p - b), pc = Math.Abs(p - c);
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
}

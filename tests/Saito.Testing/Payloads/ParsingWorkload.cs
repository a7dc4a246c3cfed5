using System.Globalization;
using System.Text;

namespace Saito.Testing;

/// <summary>
/// Typical hub messages, shared by the parsing benchmarks and Saito.Payloads.Tests' ParsingAllocationTests, so the
/// zero-allocation goal is held on the messages the benchmarks measure.
/// </summary>
public static class ParsingWorkload
{
    /// <summary>Readings per batched message: what a hub sends.</summary>
    public const int Batch = 100;

    public static readonly DateTime ReceivedAt = new(2025, 10, 6, 9, 0, 5, DateTimeKind.Utc);

    public static byte[] SaitoJsonOne() =>
        """{"ts":"2025-10-06T09:00:00.250Z","hr":72,"sys":118,"dia":76,"temp":33.9}"""u8.ToArray();

    /// <summary>One biosensor reading per element: epoch milliseconds to the microsecond, heart rate, skin temperature.</summary>
    public static byte[] SaitoJsonBatch(int count)
    {
        var text = new StringBuilder("[");
        for (int i = 0; i < count; i++)
        {
            text.Append(i == 0 ? "" : ",").Append(CultureInfo.InvariantCulture,
                $$"""{"ts":{{1759741200000 + (i * 20)}}.125,"hr":{{60 + (i % 40)}},"temp":{{33 + (i % 10 / 10.0)}}}""");
        }

        return Encoding.UTF8.GetBytes(text.Append(']').ToString());
    }

    /// <summary>One heart-rate record per reading; base name, time and unit in the first record.</summary>
    public static byte[] SenMLBatch(int count)
    {
        var text = new StringBuilder("""[{"bn":"wrist-17/","bt":1759741200.125,"bu":"beat/min","n":"hr","v":60}""");
        for (int i = 1; i < count; i++)
        {
            text.Append(CultureInfo.InvariantCulture, $$""",{"n":"hr","v":{{60 + (i % 40)}},"t":{{i * 0.02}}}""");
        }

        return Encoding.UTF8.GetBytes(text.Append(']').ToString());
    }

    /// <summary>Three records (x, y, z) per location reading, four tags (channels) in the name, merged per time and channel.</summary>
    public static byte[] SenMLLocationBatch(int readings)
    {
        var text = new StringBuilder("""[{"bn":"coat-4/","bt":1759741200.125,"bu":"m","n":"0/x","v":1.5},{"n":"0/y","v":2.5},{"n":"0/z","v":1.25}""");
        for (int i = 1; i < readings; i++)
        {
            int channel = i % 4;
            double t = i / 4 * 0.1;
            text.Append(CultureInfo.InvariantCulture,
                $$""",{"n":"{{channel}}/x","v":{{1.5 + i}},"t":{{t}}},{"n":"{{channel}}/y","v":2.5,"t":{{t}}},{"n":"{{channel}}/z","v":1.25,"t":{{t}}}""");
        }

        return Encoding.UTF8.GetBytes(text.Append(']').ToString());
    }
}

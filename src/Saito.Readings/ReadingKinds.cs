namespace Saito.Readings;

/// <summary>The kinds by name: the topic's last level, the table's middle, the archive file's prefix.</summary>
public static class ReadingKinds
{
    public static IReadOnlyList<ReadingKind> All { get; } = [ReadingKind.Biosensor, ReadingKind.Location, ReadingKind.Pressure];

    /// <summary>"biosensor", "location", "pressure".</summary>
    public static string Name(ReadingKind kind) => kind switch
    {
        ReadingKind.Biosensor => "biosensor",
        ReadingKind.Location => "location",
        ReadingKind.Pressure => "pressure",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    /// <summary>What a kind's table holds, for the comments in the schema scripts.</summary>
    public static string Description(ReadingKind kind) => kind switch
    {
        ReadingKind.Biosensor => "Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL)",
        ReadingKind.Location => "Location readings (x, y, z in metres)",
        ReadingKind.Pressure => "Pressure readings (kPa)",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    public static bool TryParse(string name, out ReadingKind kind)
    {
        foreach (var candidate in All)
        {
            if (name == Name(candidate))
            {
                kind = candidate;
                return true;
            }
        }

        kind = default;
        return false;
    }
}

using System.Security.Cryptography;

namespace Saito.Fuzz;

/// <summary>
/// The crash folder: each crasher as <c>{kind}-{sha1}.bin</c> (the input) beside <c>.txt</c> (what happened). One
/// file per distinct crash: exceptions are told apart by type and the innermost Saito frame, so a thousand inputs
/// that hit the same bug give one file; hangs and process deaths keep up to <see cref="MaxPerKind"/> each.
/// </summary>
internal sealed class CrashStore
{
    private const int MaxPerKind = 5;

    private readonly string _directory;
    private readonly HashSet<string> _identities = [];
    private readonly Dictionary<string, int> _perKind = [];

    public CrashStore(string directory)
    {
        _directory = directory;
        Directory.CreateDirectory(directory);
    }

    public int Saved { get; private set; }

    /// <summary>What tells one exception's bug from another's: its type and where in Saito's code it was thrown.</summary>
    public static string IdentityOf(Exception exception)
    {
        var trace = new System.Diagnostics.StackTrace(exception, fNeedFileInfo: false);
        var frame = trace.GetFrames().FirstOrDefault(f => f.GetMethod()?.DeclaringType?.FullName?.StartsWith("Saito.", StringComparison.Ordinal) == true);
        var method = frame?.GetMethod();
        return $"{exception.GetType().FullName} at {method?.DeclaringType?.FullName}.{method?.Name}";
    }

    /// <summary>A file name for an input: the hex of its SHA-256.</summary>
    public static string Fingerprint(byte[] input) => Convert.ToHexStringLower(SHA256.HashData(input));

    /// <summary>Writes the crasher unless one of the same identity is already kept; returns its path, or null.</summary>
    public string? Save(string kind, byte[] input, string identity, string report)
    {
        if (!_identities.Add(identity))
        {
            return null;
        }

        int count = _perKind.GetValueOrDefault(kind);
        if (kind != "crash" && count >= MaxPerKind)
        {
            return null;
        }

        _perKind[kind] = count + 1;
        string name = $"{kind}-{Fingerprint(input)[..12]}";
        string path = Path.Combine(_directory, name + ".bin");
        File.WriteAllBytes(path, input);
        File.WriteAllText(Path.Combine(_directory, name + ".txt"), $"{identity}\n{input.Length} bytes\n\n{report}\n");
        Saved++;
        return path;
    }
}

using System.Text;

namespace Saito.Server.Tests.Docs;

/// <summary>A fenced <c>sh</c> or <c>bash</c> block of a Markdown file, with the marker comment on the line before it.</summary>
internal sealed record ShellBlock(string File, int Line, string? Marker, string Text)
{
    public bool Runs => Marker == ShellExamples.RunMarker;

    public override string ToString() => $"{File} line {Line}";
}

/// <summary>
/// The shell examples of the docs, and a bash script that runs them in order. Every <c>sh</c>/<c>bash</c> block carries a
/// marker on the line before its fence: <c>&lt;!-- shell: run --&gt;</c> (pasted in order by the doc example tests) or
/// <c>&lt;!-- shell: not run (why) --&gt;</c> (it starts a server, holds placeholders, takes minutes), so a block is
/// skipped only on purpose. Markdown shows neither marker.
/// </summary>
internal static class ShellExamples
{
    public const string RunMarker = "<!-- shell: run -->";

    public const string NotRunPrefix = "<!-- shell: not run";

    /// <summary>The line the script prints before each block's first command; the failure report finds the block by it.</summary>
    private const string BlockHeader = ">>> doc example ";

    /// <summary>
    /// Makes the examples run here as they would on a newcomer's machine: <c>localhost:5000</c> and MQTT's default port are
    /// the test server's free ports; <c>dotnet run --project src/Saito.Server -- ...</c> runs the Saito.Server the tests
    /// built (ReadmeFirstRunTests builds it with <c>dotnet run</c> from a fresh copy; doing that again costs minutes); and
    /// curl fails on an HTTP error status, so a 409 or 412 stops the run instead of printing a problem and carrying on.
    /// </summary>
    private const string Preamble = """
        set -euo pipefail
        shopt -s inherit_errexit
        exec 2>&1
        curl() { command curl --fail-with-body --connect-to "localhost:5000:127.0.0.1:$SAITO_DOC_HTTP_PORT" "$@"; }
        mosquitto_pub() { command mosquitto_pub -p "$SAITO_DOC_MQTT_PORT" "$@"; }
        dotnet() {
          if [[ $# -ge 3 && $1 == run && $2 == --project && $3 == src/Saito.Server ]]; then
            shift 3
            if [[ ${1-} == -- ]]; then shift; fi
            command dotnet "$SAITO_DOC_SERVER_DLL" "$@"
          else
            echo "the doc examples run dotnet only as 'dotnet run --project src/Saito.Server -- ...': dotnet $*" >&2
            return 127
          fi
        }

        """;

    public static IReadOnlyList<ShellBlock> Blocks(string markdown, string file)
    {
        ArgumentNullException.ThrowIfNull(markdown);
        var blocks = new List<ShellBlock>();
        string[] lines = markdown.Split('\n').Select(l => l.TrimEnd('\r')).ToArray();
        for (int i = 0; i < lines.Length; i++)
        {
            if (!lines[i].StartsWith("```", StringComparison.Ordinal))
            {
                continue;
            }

            int end = Array.FindIndex(lines, i + 1, l => l.StartsWith("```", StringComparison.Ordinal));
            if (end < 0)
            {
                throw new InvalidOperationException($"{file} line {i + 1}: a fence that is never closed");
            }

            if (lines[i].Trim() is "```sh" or "```bash")
            {
                string? marker = i > 0 && lines[i - 1].StartsWith("<!-- shell:", StringComparison.Ordinal) ? lines[i - 1].Trim() : null;
                blocks.Add(new ShellBlock(file, i + 1, marker, string.Join('\n', lines[(i + 1)..end])));
            }

            i = end;
        }

        return blocks;
    }

    /// <summary>The blocks in a file that have no marker, or one that is neither run nor not run.</summary>
    public static IEnumerable<ShellBlock> Unmarked(IEnumerable<ShellBlock> blocks) =>
        blocks.Where(b => b.Marker is null || (b.Marker != RunMarker && !(b.Marker.StartsWith(NotRunPrefix, StringComparison.Ordinal) && b.Marker.EndsWith("-->", StringComparison.Ordinal))));

    /// <summary>One bash script: the preamble, then each runnable block after a header line naming it.</summary>
    public static string Script(IEnumerable<ShellBlock> blocks)
    {
        var script = new StringBuilder(Preamble);
        var runnable = blocks.Where(b => b.Runs).ToList();
        for (int i = 0; i < runnable.Count; i++)
        {
            script.Append("printf '\\n%s\\n' '").Append(BlockHeader).Append(i).Append("'\n").Append(runnable[i].Text).Append('\n');
        }

        return script.ToString();
    }

    /// <summary>
    /// For a run of <see cref="Script"/> that ended with <paramref name="exitCode"/>: null when it succeeded, else the
    /// failing block, its text and what it printed.
    /// </summary>
    public static string? Failure(IEnumerable<ShellBlock> blocks, string output, int exitCode)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (exitCode == 0)
        {
            return null;
        }

        var runnable = blocks.Where(b => b.Runs).ToList();
        int at = output.LastIndexOf(BlockHeader, StringComparison.Ordinal);
        if (at < 0)
        {
            return $"the examples' shell exited with {exitCode} before the first block:\n{output}";
        }

        int lineEnd = output.IndexOf('\n', at);
        int index = int.Parse(output.AsSpan(at + BlockHeader.Length, (lineEnd < 0 ? output.Length : lineEnd) - at - BlockHeader.Length),
            System.Globalization.CultureInfo.InvariantCulture);
        string printed = lineEnd < 0 ? string.Empty : output[(lineEnd + 1)..];
        return $"The example block at {runnable[index]} failed with exit code {exitCode}.\n--- the block:\n{runnable[index].Text}\n--- what it printed:\n{printed}";
    }
}

using System.Diagnostics;
using Npgsql;

namespace Saito.LoadTest.Common;

/// <summary>
/// Names for the throwaway databases (made by Saito.Testing's <c>PostgresDatabases</c>) on the PostgreSQL server that
/// <c>--pg</c> points at, so that every run starts from empty tables; the server's description; <c>psql</c> for the
/// reference load.
/// </summary>
internal static class PostgresTools
{
    /// <summary>A database name unique to this run: letters, digits and underscores only.</summary>
    public static string Name(string purpose) => $"saito_{purpose}_{Environment.ProcessId}_{DateTime.UtcNow:HHmmssfff}";

    /// <summary>The server's version and the settings that decide what a commit costs.</summary>
    public static async Task<string> DescribeAsync(string server, CancellationToken token)
    {
        await using var connection = new NpgsqlConnection(server);
        await connection.OpenAsync(token);
        await using var command = new NpgsqlCommand(
            "SELECT current_setting('server_version') || ', fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit')" +
            " || ', wal_sync_method=' || current_setting('wal_sync_method') || ', shared_buffers=' || current_setting('shared_buffers')", connection);
        return (string)(await command.ExecuteScalarAsync(token))!;
    }

    /// <summary>
    /// Runs <c>psql</c> against the database of <paramref name="connectionString"/> with one command
    /// (<c>-c</c>) and returns its wall time; throws with psql's message if it fails.
    /// </summary>
    public static async Task<TimeSpan> RunPsqlAsync(string psql, string connectionString, string command, CancellationToken token)
    {
        var cs = new NpgsqlConnectionStringBuilder(connectionString);
        var psi = new ProcessStartInfo(psql)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (string arg in new[] { "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", cs.Host ?? "localhost", "-p", cs.Port.ToString(System.Globalization.CultureInfo.InvariantCulture) })
        {
            psi.ArgumentList.Add(arg);
        }

        if (!string.IsNullOrEmpty(cs.Username))
        {
            psi.ArgumentList.Add("-U");
            psi.ArgumentList.Add(cs.Username);
        }

        psi.ArgumentList.Add("-d");
        psi.ArgumentList.Add(cs.Database ?? "postgres");
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(command);
        if (!string.IsNullOrEmpty(cs.Password))
        {
            psi.Environment["PGPASSWORD"] = cs.Password;
        }

        var clock = Stopwatch.StartNew();
        using var process = Process.Start(psi) ?? throw new InvalidOperationException($"Could not start {psql}");
        var stdout = process.StandardOutput.ReadToEndAsync(token);
        var stderr = process.StandardError.ReadToEndAsync(token);
        await process.WaitForExitAsync(token);
        var elapsed = clock.Elapsed;
        await stdout;
        string errors = await stderr;
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"psql exited with {process.ExitCode}: {errors.Trim()}");
        }

        return elapsed;
    }
}

using System.Globalization;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// A PostgreSQL cluster of a test's own, for tests that freeze or kill PostgreSQL (never the shared one the other tests
/// use): <c>initdb</c> into a temporary folder as the postgres OS user (through <c>runuser</c>, as scripts/test.sh does),
/// started with <c>pg_ctl</c> on a free loopback port, stopped and deleted at the end. Needs root and PostgreSQL's
/// server binaries (<c>SAITO_TEST_PG_BIN</c>, else the newest <c>/usr/lib/postgresql/*/bin</c>); skipped, saying why,
/// without them.
/// </summary>
public sealed class PrivatePostgresCluster : TestStorage
{
    private readonly string _bin;
    private readonly string _root;

    private PrivatePostgresCluster(string bin, string root, int port)
    {
        _bin = bin;
        _root = root;
        Port = port;
        ConnectionString = $"Host=127.0.0.1;Port={port};Username=postgres;Database=postgres";
        Settings = ["Storage:Provider=postgres", $"Storage:ConnectionString={ConnectionString}"];
    }

    public int Port { get; }

    public string ConnectionString { get; }

    public override IReadOnlyList<string> Settings { get; }

    private string DataDirectory => Path.Combine(_root, "data");

    public static async Task<PrivatePostgresCluster> StartAsync()
    {
        Assert.SkipUnless(Environment.IsPrivilegedProcess, "a private PostgreSQL cluster is made with runuser as the postgres user, which needs root");
        string? bin = Environment.GetEnvironmentVariable("SAITO_TEST_PG_BIN") is { Length: > 0 } configured
            ? configured
            : Directory.Exists("/usr/lib/postgresql")
                ? Directory.GetDirectories("/usr/lib/postgresql").Select(d => Path.Combine(d, "bin")).Where(b => File.Exists(Path.Combine(b, "initdb")))
                    .OrderByDescending(b => b, StringComparer.Ordinal).FirstOrDefault()
                : null;
        Assert.SkipWhen(bin is null, "no PostgreSQL server binaries (set SAITO_TEST_PG_BIN, or install postgresql as scripts/test.sh does)");
        var (hasUser, _) = await Commands.RunAsync("id", "postgres");
        Assert.SkipWhen(hasUser != 0, "no postgres OS user to run a private cluster as");

        string root = Directory.CreateTempSubdirectory("saito-private-pg-").FullName;
        await MustAsync("chown", "postgres:postgres", root);
        int port = FreePort.Next();
        var cluster = new PrivatePostgresCluster(bin!, root, port);
        try
        {
            await MustAsync("runuser", "-u", "postgres", "--", Path.Combine(bin!, "initdb"), "-D", cluster.DataDirectory, "-U", "postgres",
                "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions");
            await MustAsync("runuser", "-u", "postgres", "--", Path.Combine(bin!, "pg_ctl"), "-D", cluster.DataDirectory, "-l",
                Path.Combine(root, "server.log"), "-w", "-t", "60", "-o", $"-p {port} -c listen_addresses=127.0.0.1 -k {root}", "start");
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }

        return cluster;
    }

    /// <summary>The postmaster and every process it forked: this cluster's, found from its own postmaster.pid.</summary>
    public async Task<IReadOnlyList<int>> ProcessesAsync()
    {
        int postmaster = int.Parse((await File.ReadAllLinesAsync(Path.Combine(DataDirectory, "postmaster.pid")))[0], CultureInfo.InvariantCulture);
        var (_, children) = await Commands.RunAsync("pgrep", "-P", postmaster.ToString(CultureInfo.InvariantCulture));
        return [postmaster, .. children.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(p => int.Parse(p.Trim(), CultureInfo.InvariantCulture))];
    }

    /// <summary>SIGSTOP to the postmaster first (so it forks no more), then to its children: the server hangs, nothing fails.</summary>
    public async Task FreezeAsync()
    {
        foreach (int pid in await ProcessesAsync())
        {
            await MustAsync("kill", "-STOP", pid.ToString(CultureInfo.InvariantCulture));
        }
    }

    public async Task ThawAsync()
    {
        foreach (int pid in await ProcessesAsync())
        {
            await Commands.RunAsync("kill", "-CONT", pid.ToString(CultureInfo.InvariantCulture));
        }
    }

    public override async ValueTask DisposeAsync()
    {
        if (File.Exists(Path.Combine(DataDirectory, "postmaster.pid")))
        {
            await ThawAsync();
            await Commands.RunAsync("runuser", "-u", "postgres", "--", Path.Combine(_bin, "pg_ctl"), "-D", DataDirectory, "-m", "immediate", "-w", "-t", "30", "stop");
        }

        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
            // In /tmp; a server still letting go of a file is no reason to fail the test.
        }
    }

    private static async Task MustAsync(string program, params string[] arguments)
    {
        var (code, output) = await Commands.RunAsync(program, arguments);
        if (code != 0)
        {
            throw new InvalidOperationException($"{program} {string.Join(' ', arguments)} exited with {code}: {output}");
        }
    }
}

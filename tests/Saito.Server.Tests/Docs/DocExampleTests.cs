using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using System.Text;

namespace Saito.Server.Tests.Docs;

/// <summary>
/// The README's and docs/api.md's shell examples, pasted in order as a newcomer would, against a Saito.Server process
/// on a fresh database: the README's blocks (an admin, the example school, a check-in and its notice, a teacher) in one
/// shell, then docs/api.md's in another, as someone who reads the API doc after the README. Any command that fails, an
/// HTTP error status included, fails the test with its block, what it printed and its exit code. The README's very
/// first steps (start the server, store a reading, the archiver's dry run) are ReadmeFirstRunTests'.
/// </summary>
public sealed class DocExampleTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static readonly string[] s_documents = ["README.md", "docs/api.md"];

    private static readonly TimeSpan s_deadline = TimeSpan.FromMinutes(5);

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public void Every_shell_block_of_the_readme_and_the_api_doc_is_marked_run_or_not_run()
    {
        foreach (string document in s_documents)
        {
            var blocks = Read(document);
            ShellExamples.Unmarked(blocks).ShouldBeEmpty(
                $"every ```sh block of {document} needs, on the line before its fence, {ShellExamples.RunMarker} or {ShellExamples.NotRunPrefix} (why) -->");
            blocks.ShouldContain(b => b.Runs, $"{document} has examples that run");
        }
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task The_readme_and_api_examples_work_pasted_in_order_after_the_readme_seed(StorageProvider provider)
    {
        var folder = Directory.CreateTempSubdirectory("saito-doc-examples-");
        string? database = null;
        try
        {
            var settings = new Dictionary<string, string> { ["Saito__Storage__DataPath"] = folder.FullName };
            if (provider == StorageProvider.Postgres)
            {
                (database, string connectionString) = await postgres.CreateDatabaseAsync();
                settings["Saito__Storage__Provider"] = "postgres";
                settings["Saito__Storage__ConnectionString"] = connectionString;
            }

            int httpPort = FreePort.Next();
            await using var server = await SaitoServerProcess.StartAsync(new SaitoServerStart
            {
                Arguments = [$"--urls=http://127.0.0.1:{httpPort}"],
                Environment = settings,
                WorkingDirectory = folder.FullName,
            }, Ct);
            var environment = new Dictionary<string, string>(settings)
            {
                ["SAITO_DOC_HTTP_PORT"] = httpPort.ToString(CultureInfo.InvariantCulture),
                ["SAITO_DOC_MQTT_PORT"] = server.Port.ToString(CultureInfo.InvariantCulture),
                ["SAITO_DOC_SERVER_DLL"] = Path.Combine(AppContext.BaseDirectory, "Saito.Server.dll"),
            };

            var readme = Read("README.md");
            string readmeOutput = await RunAsync(readme, folder.FullName, environment);
            // The check-in is the seed's first student's, whose parent is told: not the seed's aide, who has no family.
            readmeOutput.ShouldContain("parent.s001@example.org", Case.Sensitive, readmeOutput);
            readmeOutput.ShouldContain("\"state\":\"pending\"", Case.Sensitive, readmeOutput);

            await RunAsync(Read("docs/api.md"), folder.FullName, environment);
        }
        finally
        {
            if (database is not null)
            {
                await postgres.DropDatabaseAsync(database);
            }

            folder.Delete(recursive: true);
        }
    }

    [Fact]
    public async Task An_example_answered_with_an_http_error_fails_naming_its_block_what_it_printed_and_its_exit_code()
    {
        const string doc = """
            <!-- shell: run -->
            ```sh
            NAME=$(echo ana)
            ```
            <!-- shell: not run (a server elsewhere) -->
            ```sh
            curl -s http://db.school.lan/
            ```
            <!-- shell: run -->
            ```sh
            echo "hello $NAME"
            curl -s -X POST localhost:5000/api/owners -d '{}'
            echo never
            ```
            <!-- shell: run -->
            ```sh
            echo never either
            ```
            """;
        var blocks = ShellExamples.Blocks(doc, "doc.md");
        var folder = Directory.CreateTempSubdirectory("saito-doc-examples-");
        var refusing = new TcpListener(IPAddress.Loopback, 0);
        refusing.Start();
        int port = ((IPEndPoint)refusing.LocalEndpoint).Port;
        var answered = AnswerConflictAsync(refusing);
        try
        {
            var (exitCode, output) = await RunScriptAsync(ShellExamples.Script(blocks), folder.FullName,
                new Dictionary<string, string> { ["SAITO_DOC_HTTP_PORT"] = port.ToString(CultureInfo.InvariantCulture), ["SAITO_DOC_MQTT_PORT"] = "1", ["SAITO_DOC_SERVER_DLL"] = "none" });

            exitCode.ShouldBe(22, output); // curl --fail-with-body: the server answered an error status
            string failure = ShellExamples.Failure(blocks, output, exitCode).ShouldNotBeNull();
            failure.ShouldContain("doc.md line 10");
            failure.ShouldContain("exit code 22");
            failure.ShouldContain("curl -s -X POST localhost:5000/api/owners");
            failure.ShouldContain("hello ana", Case.Sensitive, failure);
            failure.ShouldContain("someone saved in between", Case.Sensitive, failure);
            output.ShouldNotContain("never");
            output.ShouldNotContain("db.school.lan");
            (await answered).ShouldBe("localhost:5000", "the request went to the test's port with the doc's Host");
        }
        finally
        {
            refusing.Stop();
            folder.Delete(recursive: true);
        }
    }

    /// <summary>Answers one HTTP request with a 409 problem; the request's Host header.</summary>
    private static async Task<string> AnswerConflictAsync(TcpListener listener)
    {
        using var client = await listener.AcceptTcpClientAsync(Ct);
        var stream = client.GetStream();
        var request = new StringBuilder();
        var buffer = new byte[4096];
        while (!request.ToString().Contains("\r\n\r\n", StringComparison.Ordinal) && await stream.ReadAsync(buffer, Ct) is > 0 and int read)
        {
            request.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        string body = "{\"status\":409,\"detail\":\"someone saved in between\"}";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(
            $"HTTP/1.1 409 Conflict\r\nContent-Type: application/problem+json\r\nContent-Length: {body.Length}\r\nConnection: close\r\n\r\n{body}"), Ct);
        return request.ToString().Split("\r\n").FirstOrDefault(l => l.StartsWith("Host:", StringComparison.OrdinalIgnoreCase))?[5..].Trim() ?? string.Empty;
    }

    private static List<ShellBlock> Read(string document) =>
        [.. ShellExamples.Blocks(File.ReadAllText(Path.Combine(RepositoryRoot.Path, document)), document)];

    /// <summary>Runs the runnable blocks in one bash; what they printed, or a failure naming the block.</summary>
    private static async Task<string> RunAsync(IReadOnlyList<ShellBlock> blocks, string folder, IReadOnlyDictionary<string, string> environment)
    {
        var (exitCode, output) = await RunScriptAsync(ShellExamples.Script(blocks), folder, environment);
        if (ShellExamples.Failure(blocks, output, exitCode) is { } failure)
        {
            throw new ShouldAssertException(failure);
        }

        return output;
    }

    private static async Task<(int ExitCode, string Output)> RunScriptAsync(string script, string folder, IReadOnlyDictionary<string, string> environment)
    {
        string file = Path.Combine(folder, $"examples-{Guid.NewGuid():N}.sh");
        await File.WriteAllTextAsync(file, script, Ct);
        var psi = new ProcessStartInfo("bash") { WorkingDirectory = folder, UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(file);
        foreach (var (key, value) in environment)
        {
            psi.Environment[key] = value;
        }

        using var process = Process.Start(psi) ?? throw new InvalidOperationException("could not start bash");
        var stdout = process.StandardOutput.ReadToEndAsync(Ct);
        var stderr = process.StandardError.ReadToEndAsync(Ct);
        try
        {
            await process.WaitForExitAsync(Ct).WaitAsync(s_deadline, Ct);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"the examples did not finish within {s_deadline.TotalMinutes} minutes:\n{script}");
        }

        return (process.ExitCode, await stdout + await stderr);
    }
}

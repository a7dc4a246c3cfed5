using System.Globalization;
using MimeKit;

namespace Saito.Testing;

/// <summary>How the test SMTP server behaves.</summary>
public enum SmtpTestServerMode
{
    /// <summary>Accepts every message.</summary>
    Accept,

    /// <summary>Answers 451 (try again later) to the first <c>refuseFirst</c> messages, then accepts.</summary>
    RefuseFirst,

    /// <summary>Answers 550 (rejected) to every message.</summary>
    RejectAll,

    /// <summary>Answers 550 to every recipient, naming the address (<c>550 5.1.1 &lt;a@b&gt;: ... User unknown</c>), as real servers do.</summary>
    RejectRecipient,
}

/// <summary>
/// A real SMTP server for a test: <c>tests/clients/smtp_server.py</c> on Debian's python3-aiosmtpd (installed by
/// scripts/test.sh), on a free loopback port, storing each accepted message as a file in a folder of its own. The
/// python is <c>SAITO_TEST_PYTHON</c> (default /usr/bin/python3). Each test starts its own rather than sharing a
/// fixture: servers differ by mode (accepting, refusing, rejecting), a fresh folder is a fresh mailbox, and one
/// starts in a fraction of a second. Disposing stops the process.
/// </summary>
public sealed class SmtpTestServer : IAsyncDisposable
{
    private static readonly TimeSpan s_startTimeout = TimeSpan.FromSeconds(15);

    private readonly string _directory;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private ExternalProcess? _process;

    private SmtpTestServer(string directory, int port)
    {
        _directory = directory;
        Port = port;
    }

    public static string ScriptPath => Path.Combine(ExternalClientSettings.ClientsDirectory, "smtp_server.py");

    public static string Host => "127.0.0.1";

    public int Port { get; }

    /// <summary>The process, its stderr and its last lines (READY, REFUSED, REJECTED, STORED), for failure messages.</summary>
    public string Describe() => _process?.Describe() ?? "(not started)";

    public static async Task<SmtpTestServer> StartAsync(SmtpTestServerMode mode = SmtpTestServerMode.Accept, int refuseFirst = 0)
    {
        for (int attempt = 1; ; attempt++)
        {
            var server = new SmtpTestServer(Directory.CreateTempSubdirectory("saito-smtp-").FullName, FreePort.Next());
            try
            {
                await server.LaunchAsync(mode, refuseFirst);
                return server;
            }
            catch (ExternalClientException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                // Another process took the port between the probe and the bind: try a fresh one.
                await server.DisposeAsync();
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }
        }
    }

    private async Task LaunchAsync(SmtpTestServerMode mode, int refuseFirst)
    {
        ExternalClientSettings.EnsureExists(ExternalClientSettings.Python, "Python (with python3-aiosmtpd)");
        ExternalClientSettings.EnsureExists(ScriptPath, "The test SMTP server script");
        var args = new List<string> { "-u", ScriptPath, "--port", Port.ToString(CultureInfo.InvariantCulture), "--dir", _directory };
        if (mode == SmtpTestServerMode.RefuseFirst)
        {
            args.AddRange(["--refuse-first", refuseFirst.ToString(CultureInfo.InvariantCulture)]);
        }
        else if (mode == SmtpTestServerMode.RejectAll)
        {
            args.Add("--reject-all");
        }
        else if (mode == SmtpTestServerMode.RejectRecipient)
        {
            args.Add("--reject-recipient");
        }

        _process = ExternalProcess.Start("the test SMTP server", new ProcessCommand(ExternalClientSettings.Python, args), line =>
        {
            if (line.StartsWith("READY", StringComparison.Ordinal))
            {
                _ready.TrySetResult();
            }
        });

        var first = await Task.WhenAny(_ready.Task, _process.Exited).WaitAsync(s_startTimeout);
        if (first != _ready.Task)
        {
            string hint = _process.Stderr.Contains("No module named 'aiosmtpd'", StringComparison.Ordinal)
                ? $"{ExternalClientSettings.Python} has no aiosmtpd: run scripts/test.sh (it installs python3-aiosmtpd with apt-get) or set SAITO_TEST_PYTHON to Debian's /usr/bin/python3.\n"
                : string.Empty;
            throw new ExternalClientException($"The test SMTP server did not start.\n{hint}{_process.Describe()}");
        }
    }

    /// <summary>The messages received so far, oldest first.</summary>
    public async Task<IReadOnlyList<MimeMessage>> MessagesAsync()
    {
        var messages = new List<MimeMessage>();
        foreach (string file in Directory.GetFiles(_directory, "*.eml").Order(StringComparer.Ordinal))
        {
            messages.Add(await MimeMessage.LoadAsync(file));
        }

        return messages;
    }

    /// <summary>Waits until at least <paramref name="count"/> messages arrived, then returns them all; fails with the server's output after <paramref name="timeout"/>.</summary>
    public async Task<IReadOnlyList<MimeMessage>> WaitForMessagesAsync(int count, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (Directory.GetFiles(_directory, "*.eml").Length < count)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException(
                    $"The test SMTP server received {Directory.GetFiles(_directory, "*.eml").Length} of {count} message(s) within {timeout.TotalSeconds:0.#} s.\n{Describe()}");
            }

            await Task.Delay(25);
        }

        return await MessagesAsync();
    }

    public async ValueTask DisposeAsync()
    {
        if (_process is not null)
        {
            await _process.DisposeAsync();
        }

        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temp folder is harmless.
        }
    }
}

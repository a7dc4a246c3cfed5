using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Identity;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Readings;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Server;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Testing;

/// <summary>How to start Saito in a test: <see cref="SaitoHost.StartAsync(SaitoHostStart)"/>.</summary>
public sealed record SaitoHostStart
{
    /// <summary>Where readings and the registry go; null for a SQLite folder of the host's own, deleted with it.
    /// A storage passed here is not the host's: several hosts may share it, and the test disposes of it.</summary>
    public TestStorage? Storage { get; init; }

    /// <summary>Extra <c>Section:Key=value</c> settings, after the host's own, so they win.</summary>
    public IEnumerable<string> Settings { get; init; } = [];

    /// <summary>Passed to <see cref="SaitoApp.Build"/>: services a test adds to the real composition.</summary>
    public Action<WebApplicationBuilder>? Configure { get; init; }

    /// <summary>Whether to return only once the embedded broker serves connections (in external mode: once storage is
    /// prepared). False for a test of what happens before that.</summary>
    public bool WaitUntilServed { get; init; } = true;

    /// <summary>Whether to create one staff account per role, named after the role, with <see cref="SaitoHost.Password"/>.</summary>
    public bool StaffAccounts { get; init; }
}

/// <summary>
/// Saito composed exactly as Program.cs composes it (<see cref="SaitoApp"/>), started in-process on free loopback
/// ports: MQTT over TCP, over TLS with the test certificates and over WebSocket on the HTTP port, the REST API and the
/// pages. Requests go through the real HTTP pipeline. The one way a test starts Saito, but for a test that must kill it
/// (<see cref="SaitoProcess"/>).
/// </summary>
public sealed class SaitoHost : IAsyncDisposable
{
    /// <summary>The password of the accounts <see cref="SaitoHostStart.StaffAccounts"/> and <see cref="AddUserAsync"/> create.</summary>
    public const string Password = "correct-horse-battery";

    private readonly WebApplication _app;
    private readonly string _folder;
    private readonly TestStorage? _ownStorage;
    private readonly Dictionary<string, string> _tokens = new(StringComparer.Ordinal);

    private SaitoHost(WebApplication app, TestStorage storage, bool ownsStorage, string folder, int port, int tlsPort, int httpPort)
    {
        _app = app;
        Storage = storage;
        _ownStorage = ownsStorage ? storage : null;
        _folder = folder;
        Port = port;
        TlsPort = tlsPort;
        HttpPort = httpPort;
        BaseAddress = new Uri($"http://127.0.0.1:{httpPort}");
    }

    public TestStorage Storage { get; }

    /// <summary>MQTT over TCP.</summary>
    public int Port { get; }

    /// <summary>MQTT over TLS (the test certificates).</summary>
    public int TlsPort { get; }

    /// <summary>HTTP: the API, the pages, /health and MQTT over WebSocket at /mqtt.</summary>
    public int HttpPort { get; }

    public Uri BaseAddress { get; }

    public BrokerEndpoint Endpoint => new("saito", "127.0.0.1", Port, TlsPort, TestCertificates.Instance.CaCertificatePath, $"ws://127.0.0.1:{HttpPort}/mqtt");

    public IServiceProvider Services => _app.Services;

    public IReadingStore Store => _app.Services.GetRequiredService<IReadingStore>();

    public IngestionMetrics Metrics => _app.Services.GetRequiredService<IngestionMetrics>();

    public MqttBroker Broker => _app.Services.GetRequiredService<MqttBroker>();

    /// <summary>The SQLite file of the hot tier, when the storage is SQLite.</summary>
    public string HotDatabase => (Storage as SqliteTestStorage)?.HotFile ?? throw new InvalidOperationException("The host does not store into SQLite.");

    /// <summary>The hub credentials file (<c>Security:CredentialsFile</c>), in the host's own folder.</summary>
    public string CredentialsFile => Path.Combine(_folder, "credentials.json");

    /// <summary>Saito with the embedded broker on a SQLite folder of its own.</summary>
    /// <param name="settings">extra <c>Section:Key=value</c> settings, e.g. <c>Mqtt:MaxPacketSize=1024</c></param>
    /// <param name="configure">extra service registrations (a publish hook, an authenticator, a log provider)</param>
    /// <param name="waitUntilServed">whether to return only once the broker serves connections</param>
    public static Task<SaitoHost> StartAsync(IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null, bool waitUntilServed = true) =>
        StartAsync(new SaitoHostStart { Settings = settings ?? [], Configure = configure, WaitUntilServed = waitUntilServed });

    /// <summary>Saito storing into <paramref name="storage"/>, which the test owns (several hosts may share it).</summary>
    public static Task<SaitoHost> StartAsync(TestStorage storage, IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(storage);
        return StartAsync(new SaitoHostStart { Storage = storage, Settings = settings ?? [], Configure = configure });
    }

    /// <summary>
    /// Saito on a fresh database of <paramref name="provider"/> (on <paramref name="postgres"/> for PostgreSQL), owned by
    /// the host, with one staff account per role (<see cref="SaitoHostStart.StaffAccounts"/>): what the API and page tests need.
    /// </summary>
    public static async Task<SaitoHost> StartAsync(
        StorageProvider provider, PostgresServer? postgres, IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null)
    {
        TestStorage storage = provider == StorageProvider.Postgres
            ? await PostgresTestStorage.CreateAsync(postgres ?? throw new ArgumentNullException(nameof(postgres)))
            : new SqliteTestStorage();
        try
        {
            return await StartAsync(new SaitoHostStart { Storage = storage, Settings = settings ?? [], Configure = configure, StaffAccounts = true }, ownsStorage: true);
        }
        catch
        {
            await storage.DisposeAsync();
            throw;
        }
    }

    public static Task<SaitoHost> StartAsync(SaitoHostStart start)
    {
        ArgumentNullException.ThrowIfNull(start);
        return start.Storage is null ? StartOnOwnStorageAsync(start) : StartAsync(start, ownsStorage: false);
    }

    private static async Task<SaitoHost> StartOnOwnStorageAsync(SaitoHostStart start)
    {
        var storage = new SqliteTestStorage();
        try
        {
            return await StartAsync(start with { Storage = storage }, ownsStorage: true);
        }
        catch
        {
            await storage.DisposeAsync();
            throw;
        }
    }

    private static async Task<SaitoHost> StartAsync(SaitoHostStart start, bool ownsStorage)
    {
        var storage = start.Storage!;
        var certs = TestCertificates.Instance;
        string folder = Directory.CreateTempSubdirectory("saito-host-").FullName;
        for (int attempt = 1; ; attempt++)
        {
            int port = FreePort.Next();
            int tlsPort = FreePort.Next();
            int httpPort = FreePort.Next();
            string[] args =
            [
                $"--urls=http://127.0.0.1:{httpPort}",
                "--Mqtt:BindAddress=127.0.0.1",
                $"--Mqtt:Port={port}",
                $"--Mqtt:TlsPort={tlsPort}",
                $"--Mqtt:CertificatePath={certs.ServerCertificatePath}",
                $"--Mqtt:CertificateKeyPath={certs.ServerKeyPath}",
                $"--Auth:KeysPath={Path.Combine(folder, "keys")}",
                $"--Security:CredentialsFile={Path.Combine(folder, "credentials.json")}",
                "--Logging:LogLevel:Default=Warning",
                .. storage.Settings.Select(s => "--" + s),
                .. start.Settings.Select(s => "--" + s),
            ];
            var app = SaitoApp.Build(args, start.Configure);
            try
            {
                await app.StartAsync();
                var host = new SaitoHost(app, storage, ownsStorage, folder, port, tlsPort, httpPort);
                if (start.WaitUntilServed)
                {
                    await host.WaitUntilServedAsync();
                }

                if (start.StaffAccounts)
                {
                    // Accounts live in the registry, and the API answers 503 until it is migrated.
                    await app.Services.GetRequiredService<RegistryMigrator>().Ready.WaitAsync(TimeSpan.FromSeconds(60));
                    foreach (string role in StaffRoles.All)
                    {
                        await host.AddUserAsync(role, role);
                    }
                }

                return host;
            }
            catch (IOException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                // Another process took one of the ports between the probe and the bind: try fresh ones.
                await app.DisposeAsync();
            }
            catch
            {
                await app.DisposeAsync();
                await TestFolders.DeleteAsync(folder);
                throw;
            }
        }
    }

    // The embedded broker serves once its start gates open (storage prepared, registry migrated) or, if they take
    // longer, after Mqtt:StartupWaitSeconds (a test of a held database needs that); without it, storage readiness.
    private async Task WaitUntilServedAsync()
    {
        var timeout = TimeSpan.FromSeconds(60);
        if (_app.Services.GetService<MqttBroker>() is { } broker)
        {
            await broker.Served.WaitAsync(timeout);
        }
        else
        {
            await _app.Services.GetRequiredService<StorageStartup>().Ready.WaitAsync(timeout);
        }
    }

    /// <summary>Waits until a table holds <paramref name="expected"/> rows (readings arrive asynchronously for QoS 0 and through other brokers).</summary>
    public async Task<long> WaitForCountAsync(ReadingKind kind, long expected, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        long count;
        while ((count = await Store.CountAsync(kind, StorageTier.Hot, CancellationToken.None)) < expected && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        return count;
    }

    public async Task<HttpResponseMessage> GetHealthAsync()
    {
        using var http = Anonymous();
        return await http.GetAsync(new Uri("/health", UriKind.Relative));
    }

    /// <summary>Asks /health (as a caller on this machine) until its code and body meet <paramref name="condition"/>; returns the body.</summary>
    public async Task<string> WaitForHealthAsync(Func<System.Net.HttpStatusCode, string, bool> condition, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            using var response = await GetHealthAsync();
            string body = await response.Content.ReadAsStringAsync();
            if (condition(response.StatusCode, body))
            {
                return body;
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new ShouldAssertException($"/health did not reach the expected state in time; last answer {response.StatusCode}: {body}");
            }

            await Task.Delay(100);
        }
    }

    /// <summary>A registry context on the host's database, for a test to arrange or inspect what the API cannot.</summary>
    public RegistryDbContext OpenRegistry() => _app.Services.GetRequiredService<RegistryContextFactory>().Create();

    /// <summary>An account with <see cref="Password"/> and the given roles.</summary>
    public async Task AddUserAsync(string userName, params string[] roles)
    {
        await using var scope = _app.Services.CreateAsyncScope();
        var users = scope.ServiceProvider.GetRequiredService<UserManager<StaffUser>>();
        var user = new StaffUser { UserName = userName, CreatedAt = DateTimeOffset.UtcNow };
        (await users.CreateAsync(user, Password)).Succeeded.ShouldBeTrue();
        if (roles.Length > 0)
        {
            (await users.AddToRolesAsync(user, roles)).Succeeded.ShouldBeTrue();
        }
    }

    /// <summary>A client with no credentials.</summary>
    public HttpClient Anonymous() => new() { BaseAddress = BaseAddress, Timeout = TimeSpan.FromSeconds(30) };

    /// <summary>A client signed in as <paramref name="userName"/> with a bearer token from <c>POST /api/auth/login</c>.</summary>
    public async Task<HttpClient> AsAsync(string userName)
    {
        if (!_tokens.TryGetValue(userName, out string? token))
        {
            using var anonymous = Anonymous();
            using var response = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName, password = Password });
            response.EnsureSuccessStatusCode();
            token = (await response.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("accessToken").GetString()!;
            _tokens[userName] = token;
        }

        var client = Anonymous();
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        return client;
    }

    /// <summary>The <c>Cookie</c> header of a browser signed in as <paramref name="userName"/> (<c>?useCookies=true</c>).</summary>
    public async Task<string> CookieAsync(string userName)
    {
        using var anonymous = Anonymous();
        using var response = await anonymous.PostAsJsonAsync("/api/auth/login?useCookies=true", new { userName, password = Password });
        response.EnsureSuccessStatusCode();
        return string.Join("; ", response.Headers.GetValues("Set-Cookie").Select(c => c.Split(';')[0]));
    }

    /// <summary>The account id of a signed-in client (<c>GET /api/auth/me</c>).</summary>
    public static async Task<int> UserIdAsync(HttpClient client)
    {
        ArgumentNullException.ThrowIfNull(client);
        return (await client.GetFromJsonAsync<JsonElement>("/api/auth/me")).GetProperty("id").GetInt32();
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
        if (_ownStorage is not null)
        {
            await _ownStorage.DisposeAsync();
        }

        await TestFolders.DeleteAsync(_folder);
    }
}

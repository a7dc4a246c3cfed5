using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Identity;
using Microsoft.Extensions.DependencyInjection;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Server;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Infrastructure;

/// <summary>
/// Saito as Program.cs composes it (<see cref="SaitoApp"/>), in-process on free loopback ports, on a fresh SQLite folder or
/// PostgreSQL database, with one staff account per role. Requests go through the real HTTP pipeline.
/// </summary>
public sealed class ApiServer : IAsyncDisposable
{
    public const string Password = "correct-horse-battery";

    private readonly WebApplication _app;
    private readonly TestRegistryDatabase _database;
    private readonly string _folder;
    private readonly Dictionary<string, string> _tokens = new(StringComparer.Ordinal);

    private ApiServer(WebApplication app, TestRegistryDatabase database, string folder, int httpPort, int mqttPort)
    {
        _app = app;
        _database = database;
        _folder = folder;
        HttpPort = httpPort;
        MqttPort = mqttPort;
        BaseAddress = new Uri($"http://127.0.0.1:{httpPort}");
    }

    public int HttpPort { get; }

    public int MqttPort { get; }

    public Uri BaseAddress { get; }

    public IServiceProvider Services => _app.Services;

    public TestRegistryDatabase Database => _database;

    public string CredentialsFile => Path.Combine(_folder, "credentials.json");

    /// <param name="provider">The database of the registry and of readings.</param>
    /// <param name="postgres">The PostgreSQL server, for <see cref="StorageProvider.Postgres"/>.</param>
    /// <param name="settings">Extra <c>Section:Key=value</c> settings, e.g. <c>Auth:MaxFailedSignIns=3</c>.</param>
    /// <param name="configure">Extra service registrations, e.g. a fake <see cref="TimeProvider"/>.</param>
    public static async Task<ApiServer> StartAsync(
        StorageProvider provider, PostgresServer? postgres, IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null)
    {
        var database = await TestRegistryDatabase.CreateEmptyAsync(provider, postgres);
        string folder = Directory.CreateTempSubdirectory("saito-api-").FullName;
        var storage = database.Storage;
        string[] storageSettings = provider == StorageProvider.Sqlite
            ? ["--Storage:Provider=sqlite", $"--Storage:HotPath={storage.HotPath}", $"--Storage:ArchivePath={storage.ArchivePath}"]
            : ["--Storage:Provider=postgres", $"--Storage:ConnectionString={storage.ConnectionString}"];
        for (int attempt = 1; ; attempt++)
        {
            int httpPort = FreePort.Next();
            int mqttPort = FreePort.Next();
            string[] args =
            [
                $"--urls=http://127.0.0.1:{httpPort}",
                "--Mqtt:BindAddress=127.0.0.1",
                $"--Mqtt:Port={mqttPort}",
                "--Logging:LogLevel:Default=Warning",
                $"--Auth:KeysPath={Path.Combine(folder, "keys")}",
                $"--Security:CredentialsFile={Path.Combine(folder, "credentials.json")}",
                .. storageSettings,
                .. (settings ?? []).Select(s => "--" + s),
            ];
            var app = SaitoApp.Build(args, configure);
            try
            {
                await app.StartAsync();
                await app.Services.GetRequiredService<RegistryMigrator>().Ready.WaitAsync(TimeSpan.FromSeconds(60));
                var server = new ApiServer(app, database, folder, httpPort, mqttPort);
                foreach (string role in StaffRoles.All)
                {
                    await server.AddUserAsync(role, role);
                }

                return server;
            }
            catch (IOException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                await app.DisposeAsync();
            }
            catch
            {
                await app.DisposeAsync();
                await database.DisposeAsync();
                throw;
            }
        }
    }

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
        await _database.DisposeAsync();
        Directory.Delete(_folder, recursive: true);
    }
}

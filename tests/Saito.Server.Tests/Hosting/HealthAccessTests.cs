using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Packets;

namespace Saito.Server.Tests.Hosting;

/// <summary>
/// /health: a caller on this machine reads every check's description and figures; anybody else reads the overall
/// status and the HTTP code, never a database's error text. The tests listen on loopback only, so a remote caller is
/// made the way Kestrel makes one: a middleware at the front of the real pipeline sets the connection's remote address.
/// </summary>
public sealed class HealthAccessTests
{
    [Theory]
    [InlineData("127.0.0.1")]
    [InlineData("127.10.20.30")]
    [InlineData("::1")]
    [InlineData("::ffff:127.0.0.1")]
    public void A_loopback_address_is_a_local_caller(string address)
    {
        HealthCallers.IsLoopback(IPAddress.Parse(address)).ShouldBeTrue();
    }

    [Theory]
    [InlineData("10.0.0.7")]
    [InlineData("192.168.1.20")]
    [InlineData("203.0.113.7")]
    [InlineData("0.0.0.0")]
    [InlineData("::ffff:10.0.0.7")]
    [InlineData("fe80::1")]
    [InlineData("2001:db8::1")]
    public void Any_other_address_is_not_a_local_caller(string address)
    {
        HealthCallers.IsLoopback(IPAddress.Parse(address)).ShouldBeFalse();
    }

    [Fact]
    public void A_caller_without_a_known_address_is_not_local()
    {
        HealthCallers.IsLoopback(null).ShouldBeFalse();
        HealthCallers.IsLocal(new DefaultHttpContext()).ShouldBeFalse();
    }

    [Theory]
    [InlineData("X-Forwarded-For", "203.0.113.7")]
    [InlineData("Forwarded", "for=203.0.113.7")]
    [InlineData("X-Real-IP", "203.0.113.7")]
    public void A_loopback_request_passed_on_by_a_proxy_is_not_local(string header, string value)
    {
        var context = new DefaultHttpContext();
        context.Connection.RemoteIpAddress = IPAddress.Loopback;
        context.Request.Headers[header] = value;

        HealthCallers.IsLocal(context).ShouldBeFalse();
    }

    [Fact]
    public async Task A_local_caller_reads_each_check_and_its_figures()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage);

        using var response = await saito.GetHealthAsync();
        using var body = JsonDocument.Parse(await response.Content.ReadAsStringAsync(TestContext.Current.CancellationToken));

        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        body.RootElement.GetProperty("status").GetString().ShouldBe("Healthy");
        var storageCheck = body.RootElement.GetProperty("checks").GetProperty("storage");
        storageCheck.GetProperty("description").GetString().ShouldBe("storing readings");
        storageCheck.GetProperty("data").GetProperty("queueCapacity").GetInt64().ShouldBeGreaterThan(0);
    }

    [Fact]
    public async Task A_remote_caller_reads_the_overall_status_only()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, configure: AsIfFrom(IPAddress.Parse("203.0.113.7")));

        using var response = await saito.GetHealthAsync();
        string body = await response.Content.ReadAsStringAsync(TestContext.Current.CancellationToken);

        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        using var json = JsonDocument.Parse(body);
        json.RootElement.EnumerateObject().Select(p => p.Name).ShouldBe(["status"]);
        json.RootElement.GetProperty("status").GetString().ShouldBe("Healthy");
    }

    [Fact]
    public async Task A_request_a_proxy_on_this_machine_passes_on_reads_the_overall_status_only()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage);
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri($"http://127.0.0.1:{saito.HttpPort}/health"));
        request.Headers.Add("X-Forwarded-For", "203.0.113.7");

        using var response = await http.SendAsync(request, TestContext.Current.CancellationToken);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync(TestContext.Current.CancellationToken));

        json.RootElement.EnumerateObject().Select(p => p.Name).ShouldBe(["status"]);
    }

    [Fact]
    public async Task A_database_error_reaches_a_local_caller_but_a_remote_caller_sees_only_unhealthy_and_503()
    {
        // A person's sqlite3 holding the write lock: Saito's writes fail with "database is locked" after the busy
        // timeout (1 s here) and are retried, and /health turns Unhealthy with that error in its description.
        await using var storage = new SqliteTestStorage();
        var remoteAddress = new RemoteAddress();
        await using var saito = await SaitoHost.StartAsync(storage, ["Storage:CommandTimeoutSeconds=1"], AsIfFrom(remoteAddress));
        await using var locker = new SqliteConnection($"Data Source={storage.HotFile};Pooling=False");
        await locker.OpenAsync(TestContext.Current.CancellationToken);
        await using (var begin = locker.CreateCommand())
        {
            begin.CommandText = "BEGIN EXCLUSIVE";
            await begin.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, TestContext.Current.CancellationToken);
        var held = hub.PublishAsync("saito/hub-1/wrist-health/biosensor",
            Encoding.UTF8.GetBytes($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"hr\":70}}"), MqttQoS.AtLeastOnce,
            cancellationToken: TestContext.Current.CancellationToken);

        string local = await saito.WaitForHealthAsync((_, body) => body.Contains("locked", StringComparison.Ordinal));
        local.ShouldContain("database writes failing");

        using var remote = await GetHealthAsync(saito, remoteAddress, IPAddress.Parse("198.51.100.23"));
        string remoteBody = await remote.Content.ReadAsStringAsync(TestContext.Current.CancellationToken);
        remote.StatusCode.ShouldBe(HttpStatusCode.ServiceUnavailable);
        JsonDocument.Parse(remoteBody).RootElement.EnumerateObject().Select(p => p.Name).ShouldBe(["status"]);
        remoteBody.ShouldContain("\"Unhealthy\"");
        remoteBody.ShouldNotContain("locked");
        remoteBody.ShouldNotContain("SQLite");
        remoteBody.ShouldNotContain(storage.Directory);

        await using (var rollback = locker.CreateCommand())
        {
            rollback.CommandText = "ROLLBACK";
            await rollback.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        (await held.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken)).ShouldBe(MqttReasonCode.Success);
    }

    private static async Task<HttpResponseMessage> GetHealthAsync(SaitoHost saito, RemoteAddress remote, IPAddress? from)
    {
        remote.Address = from;
        return await saito.GetHealthAsync();
    }

    private static Action<WebApplicationBuilder> AsIfFrom(IPAddress address) => AsIfFrom(new RemoteAddress { Address = address });

    /// <summary>
    /// Puts a middleware in front of Saito's real pipeline (through an <see cref="IStartupFilter"/>, the one way in
    /// from <see cref="SaitoApp.Build"/>'s configure step) that gives each request the remote address Kestrel would
    /// have given a caller on another machine; null leaves the real (loopback) address alone.
    /// </summary>
    private static Action<WebApplicationBuilder> AsIfFrom(RemoteAddress remote) =>
        builder => builder.Services.AddSingleton<IStartupFilter>(new RemoteAddressFilter(remote));

    private sealed class RemoteAddress
    {
        public volatile IPAddress? Address;
    }

    private sealed class RemoteAddressFilter(RemoteAddress remote) : IStartupFilter
    {
        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use((context, nextMiddleware) =>
            {
                if (remote.Address is { } address)
                {
                    context.Connection.RemoteIpAddress = address;
                }

                return nextMiddleware(context);
            });
            next(app);
        };
    }
}

using System.Net.WebSockets;
using System.Text;
using Saito.Server.Tests.Infrastructure;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// The live hub against hostile clients speaking SignalR's JSON protocol over a raw WebSocket: an account over
/// <c>Dashboard:MaxConnectionsPerUser</c>, a message over the 4 KiB limit, a class the account is not listed on, and
/// ops (no vitals).
/// </summary>
public sealed class LiveHubLimitsTests
{
    private const char RecordSeparator = '\u001e';

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Too_many_connections_an_oversized_message_and_a_class_not_listed_on_are_refused()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Dashboard:MaxConnectionsPerUser=3"]);
        string teacherCookie = await server.CookieAsync("teacher");

        // Three connections are allowed. Each is known to be counted once the hub has answered a call on it (calls are
        // dispatched only after the hub's OnConnectedAsync).
        var open = new List<ClientWebSocket>();
        for (int i = 0; i < 3; i++)
        {
            var socket = await ConnectAsync(server, teacherCookie);
            await SendAsync(socket, $$"""{"type":1,"invocationId":"c{{i}}","target":"Watch","arguments":[999]}""");
            await ReadMessageAsync(socket, $"\"invocationId\":\"c{i}\"");
            open.Add(socket);
        }

        // The fourth of the same account is refused before it opens: at negotiate and at the WebSocket upgrade, 429
        // with the setting named.
        using (var client = new HttpClient { BaseAddress = server.BaseAddress })
        using (var negotiateFourth = new HttpRequestMessage(HttpMethod.Post, "/live/hub/negotiate?negotiateVersion=1"))
        {
            negotiateFourth.Headers.Add("Cookie", teacherCookie);
            using var refused = await client.SendAsync(negotiateFourth, Ct);
            refused.StatusCode.ShouldBe(HttpStatusCode.TooManyRequests);
            (await refused.Content.ReadAsStringAsync(Ct)).ShouldContain("Dashboard:MaxConnectionsPerUser");
        }

        using (var fourth = new ClientWebSocket())
        {
            fourth.Options.SetRequestHeader("Cookie", teacherCookie);
            fourth.Options.CollectHttpResponseDetails = true;
            await Should.ThrowAsync<WebSocketException>(() => fourth.ConnectAsync(new Uri($"ws://127.0.0.1:{server.HttpPort}/live/hub"), Ct));
            fourth.HttpStatusCode.ShouldBe(HttpStatusCode.TooManyRequests);
        }

        // Watching a class the teacher is not listed on is an error, and the connection stays usable.
        var first = open[0];
        await SendAsync(first, """{"type":1,"invocationId":"1","target":"Watch","arguments":[999]}""");
        string answer = await ReadMessageAsync(first, "\"invocationId\":\"1\"");
        answer.ShouldContain("You may not see this class");

        // A message over 4 KiB closes the connection.
        await SendAsync(first, $$"""{"type":1,"invocationId":"2","target":"Watch","arguments":["{{new string('x', 5000)}}"]}""");
        (await ReadUntilClosedAsync(first)).ShouldBeTrue("an oversized message did not close the connection");

        // The closed connection frees its place: the account may open one again (once the server has seen it close).
        open.Add(await ConnectOnceFreeAsync(server, teacherCookie));

        // Ops sees no vitals: the hub refuses the account before any connection.
        string opsCookie = await server.CookieAsync("ops");
        using var ops = new HttpClient { BaseAddress = server.BaseAddress };
        using var negotiate = new HttpRequestMessage(HttpMethod.Post, "/live/hub/negotiate?negotiateVersion=1");
        negotiate.Headers.Add("Cookie", opsCookie);
        (await ops.SendAsync(negotiate, Ct)).StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        foreach (var socket in open)
        {
            socket.Dispose();
        }
    }

    [Fact]
    public async Task A_connection_is_closed_once_its_user_is_taken_off_the_class_or_disabled()
    {
        // RefreshSeconds=3600: the check that closes them runs because the change came through the API, not on a timer.
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Dashboard:RefreshSeconds=3600"]);
        await server.AddUserAsync("teacher-2", "teacher");
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        using var teacher2 = await server.AsAsync("teacher-2");
        int classId = await Rosters.ListOnClassAsync(admin, [teacher, teacher2]);
        int teacherId = await SaitoHost.UserIdAsync(teacher);
        int teacher2Id = await SaitoHost.UserIdAsync(teacher2);

        var taken = await WatchingAsync(server, await server.CookieAsync("teacher"), classId);
        var disabled = await WatchingAsync(server, await server.CookieAsync("teacher-2"), classId);
        var stays = await WatchingAsync(server, await server.CookieAsync("admin"), classId);

        using (var removed = await admin.DeleteAsync($"/api/classes/{classId}/staff/{teacherId}", Ct))
        {
            removed.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        }

        (await ReadUntilClosedAsync(taken)).ShouldBeTrue("the teacher taken off the class still has its live connection");

        using (var off = await admin.PostAsync($"/api/users/{teacher2Id}/disable", null, Ct))
        {
            off.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        (await ReadUntilClosedAsync(disabled)).ShouldBeTrue("the disabled teacher still has its live connection");

        // The admin's connection is checked too, and kept: it still answers a call.
        await SendAsync(stays, """{"type":1,"invocationId":"still","target":"Watch","arguments":[""" + classId + "]}");
        (await ReadMessageAsync(stays, "\"invocationId\":\"still\"")).ShouldContain("\"result\"");
        foreach (var socket in new[] { taken, disabled, stays })
        {
            socket.Dispose();
        }
    }

    /// <summary>A connection watching <paramref name="classId"/>; the live view may need a moment to load a new class.</summary>
    internal static async Task<ClientWebSocket> WatchingAsync(SaitoHost server, string cookie, int classId)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        var socket = await ConnectAsync(server, cookie);
        for (int i = 0; ; i++)
        {
            await SendAsync(socket, $$"""{"type":1,"invocationId":"w{{i}}","target":"Watch","arguments":[{{classId}}]}""");
            string answer = await ReadMessageAsync(socket, $"\"invocationId\":\"w{i}\"");
            if (answer.Contains("\"result\"", StringComparison.Ordinal))
            {
                return socket;
            }

            answer.ShouldContain("has not loaded this class yet");
            DateTime.UtcNow.ShouldBeLessThan(deadline, "the live view did not load the new class in time");
            await Task.Delay(100, Ct);
        }
    }

    internal static async Task<ClientWebSocket> ConnectAsync(SaitoHost server, string cookie)
    {
        var socket = new ClientWebSocket();
        socket.Options.SetRequestHeader("Cookie", cookie);
        await socket.ConnectAsync(new Uri($"ws://127.0.0.1:{server.HttpPort}/live/hub"), Ct);
        await SendAsync(socket, """{"protocol":"json","version":1}""");
        return socket;
    }

    /// <summary>Connects, retrying while the account is still at its limit (429), with a deadline.</summary>
    private static async Task<ClientWebSocket> ConnectOnceFreeAsync(SaitoHost server, string cookie)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var socket = new ClientWebSocket();
            socket.Options.SetRequestHeader("Cookie", cookie);
            socket.Options.CollectHttpResponseDetails = true;
            try
            {
                await socket.ConnectAsync(new Uri($"ws://127.0.0.1:{server.HttpPort}/live/hub"), Ct);
                await SendAsync(socket, """{"protocol":"json","version":1}""");
                return socket;
            }
            catch (WebSocketException) when (socket.HttpStatusCode == HttpStatusCode.TooManyRequests && DateTime.UtcNow < deadline)
            {
                socket.Dispose();
                await Task.Delay(100, Ct);
            }
        }
    }

    internal static Task SendAsync(ClientWebSocket socket, string message) =>
        socket.SendAsync(Encoding.UTF8.GetBytes(message + RecordSeparator), WebSocketMessageType.Text, endOfMessage: true, Ct);

    /// <summary>Reads until a message containing <paramref name="marker"/> arrives (with a deadline).</summary>
    internal static async Task<string> ReadMessageAsync(ClientWebSocket socket, string marker)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Ct);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        var buffer = new byte[64 * 1024];
        var text = new StringBuilder();
        while (true)
        {
            var result = await socket.ReceiveAsync(buffer, timeout.Token);
            result.MessageType.ShouldNotBe(WebSocketMessageType.Close, $"closed before a message with {marker}");
            text.Append(Encoding.UTF8.GetString(buffer, 0, result.Count));
            foreach (string message in text.ToString().Split(RecordSeparator))
            {
                if (message.Contains(marker, StringComparison.Ordinal))
                {
                    return message;
                }
            }
        }
    }

    /// <summary>True once the server closes the connection (a close frame, or the socket drops), within a deadline.</summary>
    private static async Task<bool> ReadUntilClosedAsync(ClientWebSocket socket)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Ct);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        var buffer = new byte[64 * 1024];
        try
        {
            while (true)
            {
                var result = await socket.ReceiveAsync(buffer, timeout.Token);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    return true;
                }

                // A SignalR close message ({"type":7,...}) also ends the connection.
                if (Encoding.UTF8.GetString(buffer, 0, result.Count).Contains("\"type\":7", StringComparison.Ordinal))
                {
                    return true;
                }
            }
        }
        catch (WebSocketException)
        {
            return true;
        }
        catch (OperationCanceledException) when (!Ct.IsCancellationRequested)
        {
            return false;
        }
    }
}

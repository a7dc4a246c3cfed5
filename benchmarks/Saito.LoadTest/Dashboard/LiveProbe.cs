using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

namespace Saito.LoadTest.Dashboard;

/// <summary>
/// A dashboard that does not render: one SignalR connection to <c>/live/hub</c> spoken by hand (JSON protocol over a
/// WebSocket, the admin's bearer token), watching the class like a page does. It records, for each tile update showing
/// a newer biosensor reading, the ms from the reading's <c>ts</c> to the update's arrival here: publish-to-push, the
/// server's share of publish-to-tile, without a browser's rendering in it.
/// </summary>
internal sealed class LiveProbe : IAsyncDisposable
{
    private const char Separator = '\u001e';
    private readonly ClientWebSocket _socket;
    private readonly CancellationTokenSource _stop = new();
    private readonly Dictionary<int, DateTimeOffset> _vitalsAt = [];
    private readonly List<double> _latency = [];
    private readonly Lock _gate = new();
    private Task? _reading;
    private Task? _pinging;

    private LiveProbe(ClientWebSocket socket) => _socket = socket;

    public static async Task<LiveProbe> ConnectAsync(Uri baseAddress, string bearer, int classId, CancellationToken token)
    {
        using (var http = new HttpClient { BaseAddress = baseAddress, Timeout = TimeSpan.FromSeconds(30) })
        {
            http.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", bearer);
            using var negotiate = await http.PostAsync("/live/hub/negotiate?negotiateVersion=1", null, token);
            if (!negotiate.IsSuccessStatusCode)
            {
                throw new InvalidOperationException($"POST /live/hub/negotiate answered {(int)negotiate.StatusCode}");
            }

            string connectionToken = (await negotiate.Content.ReadFromJsonAsync<JsonElement>(token)).GetProperty("connectionToken").GetString()!;
            var socket = new ClientWebSocket();
            socket.Options.SetRequestHeader("Authorization", "Bearer " + bearer);
            try
            {
                var ws = new UriBuilder(baseAddress) { Scheme = "ws", Path = "/live/hub", Query = "id=" + Uri.EscapeDataString(connectionToken) }.Uri;
                await socket.ConnectAsync(ws, token);
                var probe = new LiveProbe(socket);
                await probe.SendAsync("{\"protocol\":\"json\",\"version\":1}", token);
                await probe.SendAsync(FormattableString.Invariant($"{{\"type\":1,\"invocationId\":\"1\",\"target\":\"Watch\",\"arguments\":[{classId}]}}"), token);
                probe._reading = Task.Run(() => probe.ReadAsync(probe._stop.Token), CancellationToken.None);
                probe._pinging = Task.Run(() => probe.PingAsync(probe._stop.Token), CancellationToken.None);
                return probe;
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }
    }

    /// <summary>Forget what was recorded (the tiles' state stays, so only newer readings count).</summary>
    public void Reset()
    {
        lock (_gate)
        {
            _latency.Clear();
        }
    }

    public double[] Latencies()
    {
        lock (_gate)
        {
            return [.. _latency];
        }
    }

    private Task SendAsync(string message, CancellationToken token) =>
        _socket.SendAsync(Encoding.UTF8.GetBytes(message + Separator), WebSocketMessageType.Text, true, token);

    /// <summary>SignalR closes a connection it has not heard from within its client timeout (30 s): a ping every 10 s.</summary>
    private async Task PingAsync(CancellationToken token)
    {
        try
        {
            while (true)
            {
                await Task.Delay(TimeSpan.FromSeconds(10), token);
                await SendAsync("{\"type\":6}", token);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or WebSocketException)
        {
        }
    }

    private async Task ReadAsync(CancellationToken token)
    {
        var buffer = new byte[1 << 16];
        var pending = new StringBuilder();
        try
        {
            while (_socket.State == WebSocketState.Open)
            {
                var received = await _socket.ReceiveAsync(buffer, token);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    return;
                }

                var arrived = DateTimeOffset.UtcNow;
                pending.Append(Encoding.UTF8.GetString(buffer, 0, received.Count));
                if (!received.EndOfMessage)
                {
                    continue;
                }

                string text = pending.ToString();
                pending.Clear();
                int start = 0;
                int end;
                while ((end = text.IndexOf(Separator, start)) >= 0)
                {
                    Observe(text.AsSpan(start, end - start), arrived);
                    start = end + 1;
                }

                pending.Append(text.AsSpan(start));
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or WebSocketException)
        {
        }
    }

    private void Observe(ReadOnlySpan<char> message, DateTimeOffset arrived)
    {
        using var doc = JsonDocument.Parse(message.ToString());
        var root = doc.RootElement;
        if (!root.TryGetProperty("type", out var type))
        {
            return;
        }

        // 3: Watch's answer, the tiles as they are (what they show is not an update); 1 "tiles": updates.
        bool snapshot = type.GetInt32() == 3 && root.TryGetProperty("result", out var result) && result.ValueKind == JsonValueKind.Object;
        bool update = type.GetInt32() == 1 && root.GetProperty("target").GetString() == "tiles";
        if (!snapshot && !update)
        {
            return;
        }

        var tiles = snapshot ? root.GetProperty("result").GetProperty("tiles") : root.GetProperty("arguments")[0];
        foreach (var tile in tiles.EnumerateArray())
        {
            if (!tile.TryGetProperty("vitalsAt", out var at) || at.ValueKind != JsonValueKind.String)
            {
                continue;
            }

            int owner = tile.GetProperty("ownerId").GetInt32();
            var vitalsAt = at.GetDateTimeOffset();
            lock (_gate)
            {
                if (_vitalsAt.TryGetValue(owner, out var previous) && previous == vitalsAt)
                {
                    continue;
                }

                _vitalsAt[owner] = vitalsAt;
                if (update)
                {
                    _latency.Add((arrived - vitalsAt).TotalMilliseconds);
                }
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        try
        {
            if (_socket.State == WebSocketState.Open)
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
                await _socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", timeout.Token);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or WebSocketException)
        {
        }

        // Started by ConnectAsync on the thread pool; a console tool has no synchronization context to deadlock on.
#pragma warning disable VSTHRD003
        await Task.WhenAll(_reading ?? Task.CompletedTask, _pinging ?? Task.CompletedTask);
#pragma warning restore VSTHRD003

        _socket.Dispose();
        _stop.Dispose();
    }
}

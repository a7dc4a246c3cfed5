using System.IO.Pipelines;
using System.Net.WebSockets;
using Microsoft.AspNetCore.Http;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// MQTT over WebSocket (MQTT 5.0 section 6): binary frames carry the byte stream, sub-protocol "mqtt".
/// The socket is adapted to a duplex pipe so the broker runs the very same connection code as for TCP.
/// </summary>
internal static class MqttWebSocketTransport
{
    private static readonly string[] s_subProtocols = ["mqtt", "mqttv3.1"];

    /// <summary>
    /// A request without an Origin header (a program, not a browser page) is allowed. A browser's Origin must be one of
    /// <paramref name="allowed"/>, or, when that list is empty, the HTTP host itself (<c>{scheme}://{Host}</c>).
    /// </summary>
    internal static bool IsOriginAllowed(HttpContext context, IReadOnlyList<string> allowed)
    {
        string? origin = context.Request.Headers.Origin;
        if (string.IsNullOrEmpty(origin))
        {
            return true;
        }

        if (allowed.Count > 0)
        {
            return allowed.Any(a => a == "*" || string.Equals(a.TrimEnd('/'), origin, StringComparison.OrdinalIgnoreCase));
        }

        string self = context.Request.Scheme + "://" + context.Request.Host.Value;
        return string.Equals(origin, self, StringComparison.OrdinalIgnoreCase);
    }

    public static async Task HandleAsync(HttpContext context, MqttBroker broker)
    {
        if (!IsOriginAllowed(context, broker.Options.WebSocketAllowedOrigins))
        {
            // A page on another site, opened by a staff member, must not reach the broker with their network position.
            context.Response.StatusCode = StatusCodes.Status403Forbidden;
            await context.Response.WriteAsync("MQTT over WebSocket: this Origin is not allowed (Mqtt:WebSocketAllowedOrigins).", context.RequestAborted);
            return;
        }

        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            await context.Response.WriteAsync("MQTT over WebSocket: connect with a WebSocket client and sub-protocol 'mqtt'.", context.RequestAborted);
            return;
        }

        var requested = context.WebSockets.WebSocketRequestedProtocols;
        string? subProtocol = s_subProtocols.FirstOrDefault(p => requested.Contains(p, StringComparer.OrdinalIgnoreCase));
        if (requested.Count > 0 && subProtocol is null)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            await context.Response.WriteAsync("Unsupported WebSocket sub-protocol; use 'mqtt'.", context.RequestAborted);
            return;
        }

        using var socket = await context.WebSockets.AcceptWebSocketAsync(subProtocol);
        var inbound = new Pipe();
        var outbound = new Pipe();
        var receiving = ReceiveAsync(socket, inbound.Writer);
        var sending = SendAsync(socket, outbound.Reader);
        await broker.RunConnectionAsync(new DuplexPipe(inbound.Reader, outbound.Writer), new MqttConnectionInfo
        {
            Transport = "ws",
            RemoteEndPoint = context.Connection.RemoteIpAddress is { } ip ? new System.Net.IPEndPoint(ip, context.Connection.RemotePort) : null,
            ClientCertificate = context.Connection.ClientCertificate,
            Forwarded = ForwardedRequests.IsForwarded(context),
            Abort = socket.Abort,
        });
        await sending;
        socket.Abort();
        await receiving;
    }

    private static async Task ReceiveAsync(WebSocket socket, PipeWriter writer)
    {
        try
        {
            while (true)
            {
                var memory = writer.GetMemory(4096);
                var result = await socket.ReceiveAsync(memory, CancellationToken.None);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    break;
                }

                if (result.MessageType == WebSocketMessageType.Text)
                {
                    // The standard says text frames close the connection [MQTT-6.0.0-1].
                    break;
                }

                writer.Advance(result.Count);
                var flush = await writer.FlushAsync();
                if (flush.IsCompleted)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The peer went away; completing the pipe tells the broker.
        }

        await writer.CompleteAsync();
    }

    private static async Task SendAsync(WebSocket socket, PipeReader reader)
    {
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync();
                var buffer = result.Buffer;
                foreach (var segment in buffer)
                {
                    await socket.SendAsync(segment, WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None);
                }

                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                {
                    break;
                }
            }

            if (socket.State == WebSocketState.Open)
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
                await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token);
            }
        }
        catch (Exception ex) when (ex is WebSocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The peer went away.
        }

        await reader.CompleteAsync();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;
        public PipeWriter Output { get; } = output;
    }
}

using System.Text.Json;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace Saito.Server;

/// <summary>
/// /health as JSON a person and a monitor can both read: the overall status (200 for Healthy and Degraded, 503 for
/// Unhealthy, as ASP.NET Core maps them), and, for a caller on this machine (<see cref="HealthCallers.IsLocal"/>),
/// each check's status, description and figures.
/// <code>
/// {"status":"Healthy","checks":{"mqtt":{"status":"Healthy","description":"MQTT broker running","data":{"connectedClients":3,...}},
///  "storage":{"status":"Healthy","description":"storing readings","data":{"queuedReadings":0,...}}}}
/// </code>
/// Any other caller gets <c>{"status":"Healthy"}</c> and the HTTP code only: descriptions can hold a database's error
/// text (server names, paths, users) and the figures say how many devices and readings a school has.
/// </summary>
internal static class HealthResponse
{
    public static HealthCheckOptions Options { get; } = new() { ResponseWriter = WriteAsync };

    private static async Task WriteAsync(HttpContext context, HealthReport report)
    {
        context.Response.ContentType = "application/json; charset=utf-8";
        // Written to a buffer first: Kestrel does not allow the synchronous writes Utf8JsonWriter makes to a stream.
        var buffer = new System.Buffers.ArrayBufferWriter<byte>(1024);
        await using var json = new Utf8JsonWriter(buffer, new JsonWriterOptions { Indented = true });
        json.WriteStartObject();
        json.WriteString("status", report.Status.ToString());
        if (HealthCallers.IsLocal(context))
        {
            WriteChecks(json, report);
        }

        json.WriteEndObject();
        await json.FlushAsync(context.RequestAborted);
        await context.Response.Body.WriteAsync(buffer.WrittenMemory, context.RequestAborted);
    }

    private static void WriteChecks(Utf8JsonWriter json, HealthReport report)
    {
        json.WriteStartObject("checks");
        foreach (var (name, entry) in report.Entries)
        {
            json.WriteStartObject(name);
            json.WriteString("status", entry.Status.ToString());
            if (entry.Description is { } description)
            {
                json.WriteString("description", description);
            }

            if (entry.Data.Count > 0)
            {
                json.WriteStartObject("data");
                foreach (var (key, value) in entry.Data)
                {
                    json.WritePropertyName(key);
                    JsonSerializer.Serialize(json, value, value?.GetType() ?? typeof(object));
                }

                json.WriteEndObject();
            }

            json.WriteEndObject();
        }

        json.WriteEndObject();
    }
}

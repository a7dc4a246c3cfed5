using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;

namespace Saito.Server.Tests.Dashboard;

/// <summary>Steps the dashboard tests share: create through the API, publish over MQTT with mosquitto_pub, write a reading's time.</summary>
internal static class DashboardTestSteps
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    /// <summary>POST <paramref name="body"/>, expect 201, answer the new id.</summary>
    public static async Task<int> CreateAsync(HttpClient client, string path, object body)
    {
        using var response = await client.PostAsJsonAsync(path, body, Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.Created, await response.Content.ReadAsStringAsync(Ct));
        return (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
    }

    /// <summary>QoS 1 through mosquitto_pub: acknowledged once committed.</summary>
    public static Task PublishAsync(SaitoHost server, string topic, string payload) =>
        ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null),
            OutgoingMessage.Text(topic, payload), new ClientOptions { QoS = 1 }, Ct);

    /// <summary>A reading's <c>ts</c>: RFC 3339, UTC, milliseconds.</summary>
    public static string Ts(DateTimeOffset t) => t.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
}

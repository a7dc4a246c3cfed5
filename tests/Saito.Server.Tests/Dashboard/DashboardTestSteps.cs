using System.Globalization;
using Saito.Registry.Model;

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

    /// <summary>
    /// Class "Morning circle" in Room 1 with <paramref name="students"/> on its roster, in a session that began
    /// <paramref name="startedMinutesAgo"/> minutes ago and ends in two hours; its id.
    /// </summary>
    public static async Task<int> ClassInSessionAsync(SaitoHost server, IEnumerable<int> students, int startedMinutesAgo)
    {
        await using var db = server.OpenRegistry();
        var now = DateTimeOffset.UtcNow;
        var c = new SchoolClass { Name = "Morning circle", Room = "Room 1", CreatedAt = now, UpdatedAt = now };
        db.Classes.Add(c);
        await db.SaveChangesAsync(Ct);
        db.RosterEntries.AddRange(students.Select(s => new RosterEntry { ClassId = c.Id, OwnerId = s, AddedAt = now }));
        db.Sessions.Add(new ClassSession { ClassId = c.Id, StartsAt = now.AddMinutes(-startedMinutesAgo), EndsAt = now.AddHours(2), SchoolDate = DateOnly.FromDateTime(now.UtcDateTime) });
        await db.SaveChangesAsync(Ct);
        return c.Id;
    }

    /// <summary>QoS 1 through mosquitto_pub: acknowledged once committed.</summary>
    public static Task PublishAsync(SaitoHost server, string topic, string payload) =>
        ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null),
            OutgoingMessage.Text(topic, payload), new ClientOptions { QoS = 1 }, Ct);

    /// <summary>A reading's <c>ts</c>: RFC 3339, UTC, milliseconds.</summary>
    public static string Ts(DateTimeOffset t) => t.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
}

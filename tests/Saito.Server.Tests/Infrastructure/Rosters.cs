
namespace Saito.Server.Tests.Infrastructure;

/// <summary>Classes for API tests: a teacher or aide acts on a student only when both are on one class.</summary>
public static class Rosters
{
    /// <summary>A new class with <paramref name="students"/> on its roster and <paramref name="staff"/> (signed-in clients) listed on it; returns its id.</summary>
    public static async Task<int> ListOnClassAsync(HttpClient admin, HttpClient[] staff, params int[] students)
    {
        ArgumentNullException.ThrowIfNull(admin);
        ArgumentNullException.ThrowIfNull(staff);
        var ct = TestContext.Current.CancellationToken;
        using var created = await admin.PostAsJsonAsync("/api/classes", new { name = "Class " + Guid.NewGuid().ToString("N")[..8], slots = Array.Empty<object>() }, ct);
        created.StatusCode.ShouldBe(HttpStatusCode.Created, await created.Content.ReadAsStringAsync(ct));
        int classId = (await created.Content.ReadFromJsonAsync<JsonElement>(ct)).GetProperty("id").GetInt32();
        foreach (int student in students)
        {
            using var roster = await admin.PutAsync($"/api/classes/{classId}/roster/{student}", null, ct);
            roster.IsSuccessStatusCode.ShouldBeTrue();
        }

        foreach (var member in staff)
        {
            using var listed = await admin.PutAsync($"/api/classes/{classId}/staff/{await SaitoHost.UserIdAsync(member)}", null, ct);
            listed.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        }

        return classId;
    }
}

using System.Globalization;
using Saito.Server.Tests.Infrastructure;

namespace Saito.Server.Tests.Api;

/// <summary>
/// Readings by owner through the assignment history, latest values and a downsampled series, and who gets blood pressure
/// from them; SQLite and PostgreSQL.
/// </summary>
public sealed class ReadingApiTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_wristband_passed_from_one_student_to_another_never_mixes_their_readings(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        var t0 = new DateTimeOffset(DateTime.UtcNow.Ticks / TimeSpan.TicksPerMinute * TimeSpan.TicksPerMinute, TimeSpan.Zero).AddMinutes(-30);
        // Six readings a minute apart; the band goes from Ana to Ben between the third and the fourth.
        string payload = "[" + string.Join(",", Enumerable.Range(0, 6).Select(i =>
            $$"""{"ts":"{{t0.AddMinutes(i).ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture)}}","hr":{{70 + i}}}""")) + "]";
        await ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null),
            OutgoingMessage.Text("saito/hub-1/wrist-07/biosensor", payload), new ClientOptions { QoS = 1 }, Ct);
        int ana = await CreateAsync(admin, "Ana");
        int ben = await CreateAsync(admin, "Ben");
        var devices = await GetAsync(admin, "/api/devices?q=wrist-07", Ct);
        int band = devices.GetProperty("items")[0].GetProperty("id").GetInt32();
        using (var first = await admin.PostAsJsonAsync("/api/assignments", new { deviceId = band, ownerId = ana, from = t0.AddMinutes(-5) }, Ct))
        {
            first.StatusCode.ShouldBe(HttpStatusCode.Created, await first.Content.ReadAsStringAsync(Ct));
        }

        using (var second = await admin.PostAsJsonAsync("/api/assignments", new { deviceId = band, ownerId = ben, from = t0.AddMinutes(2.5) }, Ct))
        {
            second.StatusCode.ShouldBe(HttpStatusCode.Created, await second.Content.ReadAsStringAsync(Ct));
        }
        string range = $"from={Uri.EscapeDataString(t0.AddMinutes(-10).ToString("O"))}&to={Uri.EscapeDataString(t0.AddMinutes(10).ToString("O"))}";
        using var teacher = await server.AsAsync("teacher");
        await Rosters.ListOnClassAsync(admin, [teacher], ana, ben);

        var anas = await GetAsync(teacher, $"/api/readings/biosensor?ownerId={ana}&{range}", Ct);
        var bens = await GetAsync(teacher, $"/api/readings/biosensor?ownerId={ben}&{range}", Ct);
        var latest = await GetAsync(teacher, $"/api/readings/biosensor/latest?ownerId={ben}", Ct);
        var series = await GetAsync(teacher, $"/api/readings/biosensor/series?deviceId={band}&bucketSeconds=180&fields=hr&{range}", Ct);
        using var badField = await teacher.GetAsync($"/api/readings/biosensor/series?deviceId={band}&fields=kpa&{range}", Ct);

        anas.EnumerateArray().Select(r => r.GetProperty("values").GetProperty("hr").GetDouble()).ShouldBe([70, 71, 72]);
        bens.EnumerateArray().Select(r => r.GetProperty("values").GetProperty("hr").GetDouble()).ShouldBe([73, 74, 75]);
        anas[0].GetProperty("ts").GetString()!.ShouldEndWith("+00:00");
        latest.EnumerateArray().ShouldHaveSingleItem().GetProperty("values").GetProperty("hr").GetDouble().ShouldBe(75);
        // Buckets of 3 minutes aligned to the epoch: the six readings fall in two or three of them; their sums match.
        var buckets = series.EnumerateArray().ToList();
        buckets.Sum(b => b.GetProperty("count").GetInt64()).ShouldBe(6);
        buckets.Min(b => b.GetProperty("fields").GetProperty("hr").GetProperty("min").GetDouble()).ShouldBe(70);
        buckets.Max(b => b.GetProperty("fields").GetProperty("hr").GetProperty("max").GetDouble()).ShouldBe(75);
        badField.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        (await badField.Content.ReadAsStringAsync(Ct)).ShouldContain("hr, sys, dia, temp");

        // The aide is listed on no class: neither student's readings, by owner or through the band.
        using var aide = await server.AsAsync("aide");
        (await aide.GetAsync($"/api/readings/biosensor?ownerId={ana}&{range}", Ct)).StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        (await aide.GetAsync($"/api/readings/biosensor/series?deviceId={band}&{range}", Ct)).StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        // And what the teacher read is in the audit.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var audit = await GetAsync(admin, $"/api/audit/vitals-views?ownerId={ben}&userName=teacher", Ct);
            if (audit.GetProperty("items").EnumerateArray().Any(v => v.GetProperty("via").GetString() == "api-readings"))
            {
                break;
            }

            DateTime.UtcNow.ShouldBeLessThan(deadline, "the teacher's reading of Ben's readings was never audited");
            await Task.Delay(100, Ct);
        }
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task An_aide_on_the_class_reads_no_blood_pressure_while_a_teacher_does(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var teacher = await server.AsAsync("teacher");
        using var aide = await server.AsAsync("aide");
        var (ana, band, range) = await StudentWithBloodPressureAsync(server, teacher, aide);

        // Left out, not null: null in a reading means the band measured nothing.
        foreach (string path in new[] { $"/api/readings/biosensor?ownerId={ana}&{range}", $"/api/readings/biosensor?deviceId={band}&{range}", $"/api/readings/biosensor/latest?ownerId={ana}" })
        {
            var values = (await GetAsync(aide, path, Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
            values.GetProperty("hr").GetDouble().ShouldBe(80, path);
            values.TryGetProperty("sys", out _).ShouldBeFalse(path);
            values.TryGetProperty("dia", out _).ShouldBeFalse(path);
        }

        foreach (string path in new[] { $"/api/readings/biosensor/series?ownerId={ana}&{range}", $"/api/readings/biosensor/series?deviceId={band}&{range}" })
        {
            var fields = (await GetAsync(aide, path, Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("fields");
            fields.GetProperty("hr").GetProperty("max").GetDouble().ShouldBe(80, path);
            fields.TryGetProperty("sys", out _).ShouldBeFalse(path);
            fields.TryGetProperty("dia", out _).ShouldBeFalse(path);
        }

        // Asked for by name: refused, saying why, rather than answered without it.
        foreach (string asked in new[] { "sys", "hr,dia" })
        {
            using var refused = await aide.GetAsync($"/api/readings/biosensor/series?ownerId={ana}&fields={asked}&{range}", Ct);
            string body = await refused.Content.ReadAsStringAsync(Ct);
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden, body);
            refused.Content.Headers.ContentType!.MediaType.ShouldBe("application/problem+json");
            body.ShouldContain("Dashboard:AidesSeeBloodPressure");
        }

        // The teacher on the same class reads all of it.
        var reading = (await GetAsync(teacher, $"/api/readings/biosensor?ownerId={ana}&{range}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
        reading.GetProperty("sys").GetDouble().ShouldBe(118);
        reading.GetProperty("dia").GetDouble().ShouldBe(76);
        var latest = (await GetAsync(teacher, $"/api/readings/biosensor/latest?ownerId={ana}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
        latest.GetProperty("sys").GetDouble().ShouldBe(118);
        var series = (await GetAsync(teacher, $"/api/readings/biosensor/series?ownerId={ana}&fields=sys,dia&{range}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("fields");
        series.GetProperty("sys").GetProperty("max").GetDouble().ShouldBe(118);
        series.GetProperty("dia").GetProperty("min").GetDouble().ShouldBe(76);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task An_aide_reads_blood_pressure_when_Dashboard_AidesSeeBloodPressure_is_true(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres, ["Dashboard:AidesSeeBloodPressure=true"]);
        using var aide = await server.AsAsync("aide");
        var (ana, _, range) = await StudentWithBloodPressureAsync(server, aide);

        var reading = (await GetAsync(aide, $"/api/readings/biosensor?ownerId={ana}&{range}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
        reading.GetProperty("sys").GetDouble().ShouldBe(118);
        reading.GetProperty("dia").GetDouble().ShouldBe(76);
        var latest = (await GetAsync(aide, $"/api/readings/biosensor/latest?ownerId={ana}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
        latest.GetProperty("dia").GetDouble().ShouldBe(76);
        var all = (await GetAsync(aide, $"/api/readings/biosensor/series?ownerId={ana}&{range}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("fields");
        all.GetProperty("sys").GetProperty("avg").GetDouble().ShouldBe(118);
        var asked = (await GetAsync(aide, $"/api/readings/biosensor/series?ownerId={ana}&fields=sys&{range}", Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("fields");
        asked.GetProperty("sys").GetProperty("avg").GetDouble().ShouldBe(118);
    }

    [Fact]
    public async Task An_id_written_loosely_is_refused_not_let_past_the_student_check()
    {
        // "+1" and " 1" bind as 1 in the handler; the check must not read them as "no id given" and let an aide on no
        // class through to student 1's readings (it once did).
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        using var aide = await server.AsAsync("aide");
        int ana = await CreateAsync(admin, "Ana");
        string range = $"from={Uri.EscapeDataString(DateTimeOffset.UtcNow.AddHours(-1).ToString("O"))}&to={Uri.EscapeDataString(DateTimeOffset.UtcNow.ToString("O"))}";

        using (var exact = await aide.GetAsync($"/api/readings/biosensor?ownerId={ana}&{range}", Ct))
        {
            exact.StatusCode.ShouldBe(HttpStatusCode.Forbidden, "the aide is listed on no class");
        }

        foreach (string loose in new[] { $"=%2B{ana}", $"=%20{ana}", $"={ana}%20", $"={ana}&{{0}}={ana}" })
        {
            string Id(string name) => name + string.Format(CultureInfo.InvariantCulture, loose, name);
            foreach (string path in new[] { $"/api/readings/biosensor?{Id("ownerId")}&{range}", $"/api/readings/biosensor/latest?{Id("ownerId")}",
                         $"/api/readings/biosensor/series?{Id("ownerId")}&{range}", $"/api/readings/biosensor?{Id("deviceId")}&{range}" })
            {
                using var response = await aide.GetAsync(path, Ct);
                string body = await response.Content.ReadAsStringAsync(Ct);
                response.StatusCode.ShouldBe(HttpStatusCode.BadRequest, $"{path}: {body}");
                response.Content.Headers.ContentType!.MediaType.ShouldBe("application/problem+json");
            }
        }
    }

    [Fact]
    public async Task A_refused_request_for_a_students_readings_is_not_audited_as_a_view()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        using var aide = await server.AsAsync("aide");
        var (ana, _, range) = await StudentWithBloodPressureAsync(server, aide);

        // Refused by the handler (blood pressure asked of an aide), then answered: only the answer is a view. The audit
        // stores views in the order they came, so once the second is there the first would be too.
        using (var refused = await aide.GetAsync($"/api/readings/biosensor/series?ownerId={ana}&fields=sys&{range}", Ct))
        {
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        }

        (await GetAsync(aide, $"/api/readings/biosensor/series?ownerId={ana}&fields=hr&{range}", Ct)).GetArrayLength().ShouldBe(1);
        var deadline = DateTime.UtcNow.AddSeconds(30);
        List<JsonElement> views;
        while (true)
        {
            var audit = await GetAsync(admin, $"/api/audit/vitals-views?ownerId={ana}&userName=aide", Ct);
            views = [.. audit.GetProperty("items").EnumerateArray().Where(v => v.GetProperty("via").GetString() == "api-readings")];
            if (views.Count > 0)
            {
                break;
            }

            DateTime.UtcNow.ShouldBeLessThan(deadline, "the aide's answered request was never audited");
            await Task.Delay(100, Ct);
        }

        views.Count.ShouldBe(1, "the refused request is not a view");
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Fields_on_the_list_and_latest_answer_the_readings_that_carry_them_and_an_aide_gets_no_row_for_blood_pressure_alone(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var teacher = await server.AsAsync("teacher");
        using var aide = await server.AsAsync("aide");
        var (ana, _, range) = await StudentWithBloodPressureAsync(server, teacher, aide);
        // A minute after the full reading, the band measures blood pressure alone. QoS 1 through Saito: acknowledged = stored.
        await ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null),
            OutgoingMessage.Text("saito/hub-1/wrist-bp/biosensor",
                $$"""{"ts":"{{DateTimeOffset.UtcNow.AddMinutes(-4).ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture)}}","sys":121,"dia":78}"""),
            new ClientOptions { QoS = 1 }, Ct);
        string list = $"/api/readings/biosensor?ownerId={ana}&{range}";
        string latest = $"/api/readings/biosensor/latest?ownerId={ana}";
        static string[] Names(JsonElement reading) => [.. reading.GetProperty("values").EnumerateObject().Select(p => p.Name)];

        // The teacher sees both readings, and the newest is the blood pressure alone.
        (await GetAsync(teacher, list, Ct)).GetArrayLength().ShouldBe(2);
        var newest = (await GetAsync(teacher, latest, Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values");
        newest.GetProperty("sys").GetDouble().ShouldBe(121);
        newest.GetProperty("hr").ValueKind.ShouldBe(JsonValueKind.Null);

        // fields= on the list and latest: the readings that carry one of them, with only those values.
        var heart = (await GetAsync(teacher, $"{list}&fields=hr", Ct)).EnumerateArray().ShouldHaveSingleItem();
        Names(heart).ShouldBe(["hr"]);
        heart.GetProperty("values").GetProperty("hr").GetDouble().ShouldBe(80);
        var pressures = (await GetAsync(teacher, $"{list}&fields=dia,sys", Ct)).EnumerateArray().ToList();
        pressures.Select(r => r.GetProperty("values").GetProperty("sys").GetDouble()).ShouldBe([118, 121]);
        foreach (var reading in pressures)
        {
            Names(reading).Order().ShouldBe(["dia", "sys"]);
        }
        var lastHeart = (await GetAsync(teacher, $"{latest}&fields=hr,temp", Ct)).EnumerateArray().ShouldHaveSingleItem();
        Names(lastHeart).ShouldBe(["hr", "temp"]);
        lastHeart.GetProperty("values").GetProperty("temp").GetDouble().ShouldBe(33.4);

        // The aide: the blood-pressure-only reading is no row at all (an empty one would say it was measured), on the
        // list and as the newest, and counts in no series bucket; asking for blood pressure by name is refused.
        (await GetAsync(aide, list, Ct)).EnumerateArray().ShouldHaveSingleItem().GetProperty("values").GetProperty("hr").GetDouble().ShouldBe(80);
        var aidesNewest = (await GetAsync(aide, latest, Ct)).EnumerateArray().ShouldHaveSingleItem();
        aidesNewest.GetProperty("values").GetProperty("hr").GetDouble().ShouldBe(80, "the newest reading the aide may see anything of");
        Names(aidesNewest).Order().ShouldBe(["hr", "temp"]);
        // Nor on /series: a bucket's count leaves it out for the aide (count minus the fields' counts would tell).
        string series = $"/api/readings/biosensor/series?ownerId={ana}&bucketSeconds=3600&{range}";
        (await GetAsync(teacher, series, Ct)).EnumerateArray().Sum(b => b.GetProperty("count").GetInt64()).ShouldBe(2);
        var aidesBuckets = (await GetAsync(aide, series, Ct)).EnumerateArray().ToList();
        aidesBuckets.Sum(b => b.GetProperty("count").GetInt64()).ShouldBe(1, "the blood-pressure-only reading is in no bucket");
        aidesBuckets.ShouldAllBe(b => b.GetProperty("count").GetInt64() == b.GetProperty("fields").GetProperty("hr").GetProperty("count").GetInt64());
        foreach (string path in new[] { $"{list}&fields=sys", $"{latest}&fields=temp,dia" })
        {
            using var refused = await aide.GetAsync(path, Ct);
            string body = await refused.Content.ReadAsStringAsync(Ct);
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden, $"{path}: {body}");
            body.ShouldContain("Dashboard:AidesSeeBloodPressure");
        }

        // Fields that are not the kind's, none, or too long a list: 400s that say why.
        foreach (string path in new[] { $"{list}&fields=kpa", $"{latest}&fields=x", $"{latest}&fields=,", $"{list}&fields={new string('a', 201)}", $"{latest}&fields={new string('a', 201)}" })
        {
            using var bad = await teacher.GetAsync(path, Ct);
            string body = await bad.Content.ReadAsStringAsync(Ct);
            bad.StatusCode.ShouldBe(HttpStatusCode.BadRequest, $"{path}: {body}");
            body.ShouldContain("fields");
        }
    }

    [Fact]
    public async Task A_series_range_that_touches_too_many_buckets_or_a_bucket_below_a_second_is_a_400_not_a_500()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var teacher = await server.AsAsync("teacher");
        var (ana, _, _) = await StudentWithBloodPressureAsync(server, teacher);

        // 10,000 one-second buckets long, but starting half-way into a second: it touches 10,001 epoch-aligned buckets,
        // which the store refuses. The endpoint once counted 10,000 and let it through to a 500.
        // The range covers the band's assignment (ten minutes ago), so the store is asked.
        var now = DateTimeOffset.UtcNow;
        var from = new DateTimeOffset(now.Year, now.Month, now.Day, now.Hour, now.Minute, now.Second, TimeSpan.Zero).AddSeconds(-9_000).AddMilliseconds(500);
        string range = $"from={Uri.EscapeDataString(from.ToString("O"))}&to={Uri.EscapeDataString(from.AddSeconds(10_000).ToString("O"))}";
        foreach (string query in new[] { $"bucketSeconds=1&{range}", $"bucketSeconds=-5&{range}", $"bucketSeconds=0&{range}" })
        {
            using var response = await teacher.GetAsync($"/api/readings/biosensor/series?ownerId={ana}&{query}", Ct);
            string body = await response.Content.ReadAsStringAsync(Ct);
            response.StatusCode.ShouldBe(HttpStatusCode.BadRequest, $"{query}: {body}");
            body.ShouldContain("bucketSeconds");
        }

        // An empty field list and dates whose neighbours are not dates: 400s too, not 500s.
        foreach (string path in new[]
                 {
                     $"/api/readings/biosensor/series?ownerId={ana}&fields=,&{range}",
                     $"/api/readings/biosensor?ownerId={ana}&to=0001-01-01T00:00:00Z",
                     $"/api/readings/biosensor/series?ownerId={ana}&to=0001-01-01T00:00:00Z",
                     $"/api/students/{ana}/chart?to=0001-01-01T01:00:00Z",
                     $"/api/students/{ana}/chart?from=9999-12-31T23:00:00Z",
                 })
        {
            using var response = await teacher.GetAsync(path, Ct);
            string body = await response.Content.ReadAsStringAsync(Ct);
            response.StatusCode.ShouldBe(HttpStatusCode.BadRequest, $"{path}: {body}");
        }

        // One bucket fewer fits.
        string fits = $"from={Uri.EscapeDataString(from.ToString("O"))}&to={Uri.EscapeDataString(from.AddSeconds(9_999).ToString("O"))}";
        using var ok = await teacher.GetAsync($"/api/readings/biosensor/series?ownerId={ana}&bucketSeconds=1&{fits}", Ct);
        ok.StatusCode.ShouldBe(HttpStatusCode.OK, await ok.Content.ReadAsStringAsync(Ct));
    }

    /// <summary>
    /// Ana, wearing a band that sent one reading with every biosensor field five minutes ago, on a class these staff are
    /// listed on; her id, the band's, and a range around the reading.
    /// </summary>
    private static async Task<(int Ana, int Band, string Range)> StudentWithBloodPressureAsync(SaitoHost server, params HttpClient[] staff)
    {
        using var admin = await server.AsAsync("admin");
        var at = DateTimeOffset.UtcNow.AddMinutes(-5);
        await ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null),
            OutgoingMessage.Text("saito/hub-1/wrist-bp/biosensor",
                $$"""{"ts":"{{at.ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture)}}","hr":80,"sys":118,"dia":76,"temp":33.4}"""),
            new ClientOptions { QoS = 1 }, Ct);
        int ana = await CreateAsync(admin, "Ana");
        int band = (await GetAsync(admin, "/api/devices?q=wrist-bp", Ct)).GetProperty("items")[0].GetProperty("id").GetInt32();
        using (var assigned = await admin.PostAsJsonAsync("/api/assignments", new { deviceId = band, ownerId = ana, from = at.AddMinutes(-5) }, Ct))
        {
            assigned.StatusCode.ShouldBe(HttpStatusCode.Created, await assigned.Content.ReadAsStringAsync(Ct));
        }

        await Rosters.ListOnClassAsync(admin, staff, ana);
        string range = $"from={Uri.EscapeDataString(at.AddMinutes(-10).ToString("O"))}&to={Uri.EscapeDataString(at.AddMinutes(10).ToString("O"))}";
        return (ana, band, range);
    }

    private static async Task<JsonElement> GetAsync(HttpClient client, string path, CancellationToken cancellationToken)
    {
        using var response = await client.GetAsync(path, cancellationToken);
        string body = await response.Content.ReadAsStringAsync(cancellationToken);
        response.IsSuccessStatusCode.ShouldBeTrue($"GET {path}: {(int)response.StatusCode} {body}");
        return JsonDocument.Parse(body).RootElement.Clone();
    }

    /// <summary>A class with these students on its roster, and these staff listed on it (teachers and aides read only their students' readings).</summary>

    private static async Task<int> CreateAsync(HttpClient admin, string name)
    {
        using var response = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = name }, Ct);
        return (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
    }
}

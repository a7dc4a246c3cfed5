using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Text.Json;
using Saito.LoadTest.Classroom;

namespace Saito.LoadTest.Dashboard;

/// <summary>
/// What a user sets up through Saito's API before a tile can show a student's readings, done the way an admin would:
/// sign in (<c>POST /api/auth/login</c>), students (<c>POST /api/owners</c>), a class with a weekly slot around now,
/// its roster and its session (<c>POST /api/classes</c>, <c>PUT .../roster/{owner}</c>, <c>POST /api/sessions/plan</c>),
/// then each run's devices added by hand (<c>POST /api/devices</c>, "before it is first seen") and assigned to the
/// students (<c>POST /api/assignments</c>); a run's devices are retired when it is over, which ends their assignments.
/// </summary>
internal sealed class SaitoApi : IDisposable
{
    private readonly HttpClient _http;

    private SaitoApi(HttpClient http, string bearer)
    {
        _http = http;
        Bearer = bearer;
    }

    /// <summary>The access token the tool signed in with (for the <see cref="LiveProbe"/>).</summary>
    public string Bearer { get; }

    public static async Task<SaitoApi> SignInAsync(Uri baseAddress, string userName, string password, CancellationToken token)
    {
        var http = new HttpClient { BaseAddress = baseAddress, Timeout = TimeSpan.FromSeconds(60) };
        try
        {
            // 503 while Saito prepares the registry's database (after its readings' storage is ready): a moment more.
            var deadline = DateTime.UtcNow.AddSeconds(120);
            var response = await http.PostAsJsonAsync("/api/auth/login", new { userName, password }, token);
            while (response.StatusCode == HttpStatusCode.ServiceUnavailable && DateTime.UtcNow < deadline)
            {
                response.Dispose();
                await Task.Delay(250, token);
                response = await http.PostAsJsonAsync("/api/auth/login", new { userName, password }, token);
            }

            using var answered = response;
            await EnsureAsync(response, "POST /api/auth/login", token);
            string accessToken = (await response.Content.ReadFromJsonAsync<JsonElement>(token)).GetProperty("accessToken").GetString()!;
            http.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", accessToken);
            return new SaitoApi(http, accessToken);
        }
        catch
        {
            http.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The students, a class whose weekly slot (in the school's time zone, <paramref name="schoolHours"/> off UTC, as the
    /// tool starts Saito: <see cref="EtcZone"/>) began a few minutes ago and lasts past the run, every student on its
    /// roster, and today's session planned. Returns the class id and the students' owner ids, in the layout's student order.
    /// </summary>
    public async Task<(int ClassId, int[] Students)> ClassAsync(string name, int students, TimeSpan lasting, int schoolHours, CancellationToken token)
    {
        var owners = new int[students];
        for (int i = 0; i < students; i++)
        {
            owners[i] = await CreateAsync("/api/owners", new { kind = "student", displayName = string.Create(CultureInfo.InvariantCulture, $"Student {i + 1:D2}") }, token);
        }

        var now = DateTime.UtcNow.AddHours(schoolHours);
        var start = new TimeOnly(now.Hour, now.Minute).Add(TimeSpan.FromMinutes(-5), out int wrapped);
        if (wrapped != 0)
        {
            start = TimeOnly.MinValue;
        }

        // To the end of the day at most (a slot does not cross midnight), at least long enough for the run.
        int minutes = (int)Math.Clamp(Math.Ceiling((TimeSpan.FromDays(1) - start.ToTimeSpan()).TotalMinutes) - 1, 1, 720);
        minutes = Math.Min(minutes, Math.Max(60, (int)lasting.TotalMinutes + 30));
        string day = now.DayOfWeek.ToString().ToLowerInvariant();
        int classId = await CreateAsync("/api/classes", new
        {
            name,
            room = "Bench room",
            slots = new[] { new { day, start = start.ToString("HH:mm", CultureInfo.InvariantCulture), durationMinutes = minutes } },
        }, token);
        foreach (int owner in owners)
        {
            using var put = await _http.PutAsync(Invariant($"/api/classes/{classId}/roster/{owner}"), null, token);
            await EnsureAsync(put, "PUT /api/classes/{id}/roster/{owner}", token);
        }

        string today = DateOnly.FromDateTime(now).ToString("yyyy-MM-dd", CultureInfo.InvariantCulture);
        using var plan = await _http.PostAsJsonAsync("/api/sessions/plan", new { from = today, to = today }, token);
        await EnsureAsync(plan, "POST /api/sessions/plan", token);
        var sessions = await _http.GetFromJsonAsync<JsonElement>("/api/sessions", token);
        var nowOffset = DateTimeOffset.UtcNow;
        bool running = Items(sessions).Any(s => s.GetProperty("classId").GetInt32() == classId
            && s.GetProperty("startsAt").GetDateTimeOffset() <= nowOffset && s.GetProperty("endsAt").GetDateTimeOffset() > nowOffset.Add(lasting));
        if (!running)
        {
            throw new InvalidOperationException($"No session of class {classId} runs now and through the run after POST /api/sessions/plan: {await plan.Content.ReadAsStringAsync(token)}");
        }

        return (classId, owners);
    }

    /// <summary>Hours to add to <paramref name="utc"/> for about noon (from -11 to +12, which the Etc zones cover).</summary>
    public static int NoonOffsetHours(DateTime utc) => 12 - utc.Hour;

    /// <summary>The IANA zone <paramref name="hours"/> ahead of UTC (the Etc zones' sign is the POSIX one, reversed).</summary>
    public static string EtcZone(int hours) => hours switch
    {
        0 => "Etc/UTC",
        > 0 => Invariant($"Etc/GMT-{hours}"),
        _ => Invariant($"Etc/GMT+{-hours}"),
    };

    /// <summary>Adds the layout's devices (kind as a school would file them) and gives each to its student; returns their ids.</summary>
    public async Task<int[]> AssignAsync(ClassroomLayout layout, int[] students, CancellationToken token)
    {
        var ids = new int[layout.Devices.Count];
        for (int i = 0; i < ids.Length; i++)
        {
            var device = layout.Devices[i];
            string kind = device.Role switch
            {
                ClassroomRole.Wrist => "wristband",
                ClassroomRole.Garment => "location-garment",
                ClassroomRole.Seat => "pressure-mat",
                _ => "foot-mat",
            };
            ids[i] = await CreateAsync("/api/devices", new { serial = device.Serial, kind, channels = device.Channels }, token);
            await CreateAsync("/api/assignments", new { deviceId = ids[i], ownerId = students[device.Student], note = "dashboard benchmark" }, token);
        }

        return ids;
    }

    /// <summary>Takes a run's devices out of use (their assignments end), so the next run's devices are the students' only ones.</summary>
    public async Task RetireAsync(IEnumerable<int> devices, CancellationToken token)
    {
        foreach (int id in devices)
        {
            using var response = await _http.PostAsync(Invariant($"/api/devices/{id}/retire"), null, token);
            await EnsureAsync(response, "POST /api/devices/{id}/retire", token);
        }
    }

    /// <summary>What the server says about the live view (skipped readings, counters), if it says.</summary>
    public async Task<string?> TryGetAsync(string path, CancellationToken token)
    {
        try
        {
            using var response = await _http.GetAsync(path, token);
            return response.IsSuccessStatusCode ? await response.Content.ReadAsStringAsync(token) : null;
        }
        catch (HttpRequestException)
        {
            return null;
        }
    }

    private async Task<int> CreateAsync(string path, object body, CancellationToken token)
    {
        using var response = await _http.PostAsJsonAsync(path, body, token);
        if (response.StatusCode != HttpStatusCode.Created)
        {
            throw new InvalidOperationException($"POST {path} answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync(token)}");
        }

        return (await response.Content.ReadFromJsonAsync<JsonElement>(token)).GetProperty("id").GetInt32();
    }

    private static JsonElement.ArrayEnumerator Items(JsonElement page) =>
        page.ValueKind == JsonValueKind.Array ? page.EnumerateArray() : page.GetProperty("items").EnumerateArray();

    private static async Task EnsureAsync(HttpResponseMessage response, string what, CancellationToken token)
    {
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"{what} answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync(token)}");
        }
    }

    private static string Invariant(FormattableString text) => FormattableString.Invariant(text);

    /// <summary>
    /// <c>Saito.Server.dll users add NAME --role admin</c> with the server's settings (it prepares the database first):
    /// the account the tool signs in with, its generated password read from what the command prints.
    /// </summary>
    public static async Task<string> AddAdminAsync(string serverDll, string userName, IEnumerable<string> settings, CancellationToken token)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string arg in new[] { serverDll, "users", "add", userName, "--role", "admin", "--Logging:LogLevel:Default=Warning" }.Concat(settings))
        {
            psi.ArgumentList.Add(arg);
        }

        using var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start dotnet " + serverDll);
        var output = process.StandardOutput.ReadToEndAsync(token);
        var error = process.StandardError.ReadToEndAsync(token);
        await process.WaitForExitAsync(token);
        string text = await output;
        // The password is the one indented line after "Password, shown once".
        var lines = text.Split('\n');
        int at = Array.FindIndex(lines, l => l.Contains("shown once", StringComparison.Ordinal));
        string? password = at < 0 ? null : lines.Skip(at + 1).Select(l => l.Trim()).FirstOrDefault(l => l.Length > 0);
        if (process.ExitCode != 0 || string.IsNullOrEmpty(password))
        {
            throw new InvalidOperationException($"saito users add {userName} failed (exit {process.ExitCode}): {text}{await error}");
        }

        return password;
    }

    public void Dispose() => _http.Dispose();
}

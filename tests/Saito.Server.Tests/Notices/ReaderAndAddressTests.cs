using System.Globalization;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using Saito.Readings;
using Saito.Storage;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Notices;

/// <summary>
/// Issue 32, items 7 and 11, through a real Saito, a real SMTP server (aiosmtpd) and mosquitto_pub: ops never read a
/// family's address in a notice's last error, and a hub's stale check-in emails no one.
/// </summary>
public sealed class ReaderAndAddressTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Ops_read_a_mail_server_s_refusal_without_the_family_s_address_in_it()
    {
        await using var smtp = await SmtpTestServer.StartAsync(SmtpTestServerMode.RejectRecipient);
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, Mail(smtp));
        using var admin = await server.AsAsync("admin");
        int student = await StudentWithParentAsync(admin, "parent.of.lea@example.org");
        using (var checkedIn = await admin.PostAsJsonAsync("/api/check-ins", new { ownerId = student }, Ct))
        {
            checkedIn.StatusCode.ShouldBe(HttpStatusCode.Created);
        }

        using var ops = await server.AsAsync("ops");
        var notice = await EventuallyFailedAsync(ops);
        string error = notice.GetProperty("lastError").GetString()!;
        error.ShouldStartWith("550", customMessage: smtp.Describe());
        error.ShouldNotContain("parent.of.lea", Case.Insensitive);
        error.ShouldNotContain("@");
        notice.GetProperty("toAddress").GetString().ShouldBe("(hidden)");

        // Nor is it kept anywhere ops could read it later (the log lines carry the stored reason).
        await using var db = server.OpenRegistry();
        (await db.Notices.SingleAsync(Ct)).LastError.ShouldNotBeNull().ShouldNotContain("parent.of.lea", Case.Insensitive);
    }

    [Fact]
    public void A_row_stored_before_redaction_is_redacted_for_ops_and_not_for_admins()
    {
        var notice = new Saito.Registry.Model.Notice
        {
            Id = 1, OwnerId = 2, ContactId = 3, ToAddress = "Parent@Example.org", Language = "en", MessageId = "m", DedupKey = "k",
            LastError = "550 5.1.1 <parent@example.org>: unknown; also tried other.adult@example.net",
        };
        var ops = new System.Security.Claims.ClaimsPrincipal(new System.Security.Claims.ClaimsIdentity([new(System.Security.Claims.ClaimTypes.Role, "ops")], "t"));
        var admin = new System.Security.Claims.ClaimsPrincipal(new System.Security.Claims.ClaimsIdentity([new(System.Security.Claims.ClaimTypes.Role, "admin")], "t"));

        Saito.Server.Api.NoticeView.Of(notice, ops).LastError.ShouldBe("550 5.1.1 <(address hidden)>: unknown; also tried (address hidden)");
        Saito.Server.Api.NoticeView.Of(notice, admin).LastError.ShouldBe(notice.LastError);
    }

    [Fact]
    public async Task A_hub_s_check_in_stamped_long_ago_or_ahead_is_a_dead_letter_and_emails_no_one()
    {
        await using var smtp = await SmtpTestServer.StartAsync();
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, Mail(smtp));
        using var admin = await server.AsAsync("admin");
        int student = await StudentWithParentAsync(admin, "mum@example.org");

        // A day back (within Ingestion:MaxAgeDays, so only the new window stops it), 15 minutes back, 3 minutes ahead (within Ingestion:MaxFutureSkewSeconds).
        var now = DateTimeOffset.UtcNow;
        foreach (var stale in new[] { now.AddDays(-1), now.AddMinutes(-15), now.AddMinutes(3) })
        {
            await PublishAsync(server, "saito/hub-1/fp-1/checkin", $$"""{"owner":{{student}},"ts":"{{Ts(stale)}}"}""");
        }

        var store = server.Services.GetRequiredService<IReadingStore>();
        var letters = await store.ReadDeadLettersAsync(10, Ct);
        letters.Count.ShouldBe(3);
        letters.ShouldAllBe(l => l.Reason == DeadLetterReasons.BadCheckIn && l.Detail.Contains("CheckIns:ReaderMaxAgeSeconds"));
        await using (var db = server.OpenRegistry())
        {
            (await db.CheckIns.CountAsync(Ct)).ShouldBe(0);
            (await db.Notices.CountAsync(Ct)).ShouldBe(0);
        }

        // The control: a check-in about now is recorded and the family is told, once; the stale ones never were.
        await PublishAsync(server, "saito/hub-1/fp-1/checkin", $$"""{"owner":{{student}},"ts":"{{Ts(now.AddSeconds(-20))}}"}""");
        (await smtp.WaitForMessagesAsync(1, TimeSpan.FromSeconds(30))).ShouldHaveSingleItem().To.Mailboxes.Single().Address.ShouldBe("mum@example.org");
        await using (var db = server.OpenRegistry())
        {
            (await db.CheckIns.SingleAsync(Ct)).CheckedInAt.ShouldBe(now.AddSeconds(-20), TimeSpan.FromMilliseconds(1));
            (await db.Notices.CountAsync(Ct)).ShouldBe(1);
        }
    }

    private static string[] Mail(SmtpTestServer smtp) =>
    [
        $"Notices:Smtp:Host={SmtpTestServer.Host}", $"Notices:Smtp:Port={smtp.Port.ToString(CultureInfo.InvariantCulture)}",
        "Notices:From=office@hillside.example", "Notices:PollSeconds=1",
    ];

    private static async Task<int> StudentWithParentAsync(HttpClient admin, string email)
    {
        int student = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Léa" });
        await CreateAsync(admin, $"/api/owners/{student}/contacts", new { name = "Parent", email, relationship = "parent", notifyArrival = true });
        return student;
    }

    private static async Task<JsonElement> EventuallyFailedAsync(HttpClient ops)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var page = await ops.GetFromJsonAsync<JsonElement>("/api/notices?state=failed", Ct);
            if (page.GetProperty("items").EnumerateArray().FirstOrDefault() is { ValueKind: JsonValueKind.Object } notice)
            {
                return notice;
            }

            DateTime.UtcNow.ShouldBeLessThan(deadline, "no notice failed");
            await Task.Delay(100, Ct);
        }
    }
}

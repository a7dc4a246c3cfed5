using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;
using Saito.Registry.Tests.Infrastructure;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.EndToEnd;

/// <summary>
/// The guardian notice's outbox across a crash: Saito (a real process) records a fingerprint check-in and its notice,
/// cannot reach the mail server, is killed with SIGKILL, and restarts with the mail server back: exactly one email.
/// </summary>
public sealed class NoticeCrashTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Killed_between_the_outbox_write_and_the_send_a_restarted_Saito_sends_the_notice_exactly_once()
    {
        await using var database = await TestRegistryDatabase.CreateAsync(StorageProvider.Sqlite, null);
        int student;
        await using (var db = database.Open())
        {
            var now = DateTimeOffset.UtcNow;
            var owner = new Owner { DisplayName = "Ana B", Kind = OwnerKind.Student, CreatedAt = now, UpdatedAt = now, Version = 1 };
            owner.Contacts.Add(new Contact { Name = "Marie B", Email = "marie@example.org", CreatedAt = now, UpdatedAt = now, Version = 1 });
            db.Owners.Add(owner);
            await db.SaveChangesAsync(Ct);
            student = owner.Id;
        }

        string folder = Directory.CreateTempSubdirectory("saito-notice-crash-").FullName;
        await using var smtp = await SmtpTestServer.StartAsync();
        string[] Settings(int smtpPort) =>
        [
            "--Storage:Provider=sqlite",
            $"--Storage:HotPath={database.Storage.HotPath}",
            $"--Storage:ArchivePath={database.Storage.ArchivePath}",
            $"--Auth:KeysPath={Path.Combine(folder, "keys")}",
            $"--Security:CredentialsFile={Path.Combine(folder, "credentials.json")}",
            "--Notices:Smtp:Host=127.0.0.1",
            $"--Notices:Smtp:Port={smtpPort}",
            "--Notices:From=school@example.org",
            "--Notices:RetryBaseSeconds=1",
            "--Notices:PollSeconds=1",
        ];

        // First run: the mail server's address is one where nothing listens.
        int nowhere = FreePort.Next();
        await using (var first = await SaitoServerProcess.StartAsync(new SaitoServerStart { Arguments = Settings(nowhere), WorkingDirectory = folder }, Ct))
        {
            await ExternalClients.Mosquitto311.PublishAsync(new BrokerEndpoint("saito", "127.0.0.1", first.Port, null, null, null),
                OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{student}}}"""), new ClientOptions { QoS = 1 }, Ct);

            // The check-in was acknowledged, so its notice is in the outbox; wait until a send has failed, then kill.
            var attempted = await WaitForNoticeAsync(database, n => n.Attempts >= 1 && n.State == NoticeState.Pending, "a failed first attempt");
            attempted.LastError.ShouldNotBeNullOrEmpty();
            await first.KillAsync();
        }

        (await smtp.MessagesAsync()).ShouldBeEmpty();

        await using (var second = await SaitoServerProcess.StartAsync(new SaitoServerStart { Arguments = Settings(smtp.Port), WorkingDirectory = folder }, Ct))
        {
            var sent = await WaitForNoticeAsync(database, n => n.State == NoticeState.Sent, "the notice sent after the restart");
            var messages = await smtp.WaitForMessagesAsync(1, TimeSpan.FromSeconds(30));

            messages.Count.ShouldBe(1);
            messages[0].To.ToString().ShouldContain("marie@example.org");
            ("<" + messages[0].MessageId + ">").ShouldBe(sent.MessageId);
            await using var db = database.Open();
            (await db.Notices.CountAsync(Ct)).ShouldBe(1);
            (await db.CheckIns.CountAsync(Ct)).ShouldBe(1);
        }

        (await smtp.MessagesAsync()).Count.ShouldBe(1);
        Directory.Delete(folder, recursive: true);
    }

    private static async Task<Notice> WaitForNoticeAsync(TestRegistryDatabase database, Func<Notice, bool> condition, string what)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            await using (var db = database.Open())
            {
                if ((await db.Notices.AsNoTracking().ToListAsync(Ct)).FirstOrDefault(condition) is { } notice)
                {
                    return notice;
                }
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new ShouldAssertException($"Timed out waiting for {what}.");
            }

            await Task.Delay(100, Ct);
        }
    }
}

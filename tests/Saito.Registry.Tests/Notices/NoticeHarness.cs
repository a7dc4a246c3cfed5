using System.Globalization;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Registry.Notices;
using Saito.Registry.Tests.Infrastructure;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Notices;

/// <summary>
/// Guardian notices as the server wires them (<see cref="NoticesServiceCollectionExtensions.AddGuardianNotices"/>)
/// over a test registry database, a fake clock, and the test SMTP server when one is given (none: the sender is off).
/// The school is in Europe/Paris and speaks English unless a contact says otherwise.
/// </summary>
internal sealed class NoticeHarness : IAsyncDisposable
{
    public const string SchoolName = "Hillside School";

    /// <summary>Thursday 26 November 2026, 08:05 UTC (09:05 in Paris).</summary>
    public static readonly DateTimeOffset Start = new(2026, 11, 26, 8, 5, 0, TimeSpan.Zero);

    private readonly ServiceProvider _services;
    private readonly SmtpTestServer? _smtp;

    private NoticeHarness(ServiceProvider services, TestRegistryDatabase database, SmtpTestServer? smtp, FakeTimeProvider time, CapturedLog logs)
    {
        _services = services;
        Database = database;
        _smtp = smtp;
        Time = time;
        Logs = logs;
    }

    public TestRegistryDatabase Database { get; }

    /// <summary>The test SMTP server the sender uses.</summary>
    public SmtpTestServer Smtp => _smtp ?? throw new InvalidOperationException("This harness has no mail server (the sender is off)");

    public FakeTimeProvider Time { get; }

    public CapturedLog Logs { get; }

    public GuardianNotices Notices => _services.GetRequiredService<GuardianNotices>();

    public AbsenceWatcher Watcher => _services.GetRequiredService<AbsenceWatcher>();

    public NoticeSender Sender => _services.GetRequiredService<NoticeSender>();

    public NoticeSignal Signal => _services.GetRequiredService<NoticeSignal>();

    public SchoolOptions School => _services.GetRequiredService<IOptions<SchoolOptions>>().Value;

    /// <summary>
    /// A fresh database of <paramref name="provider"/> and, unless <paramref name="mail"/> is null (the sender off), a
    /// test SMTP server of that mode; both go when the harness is disposed.
    /// </summary>
    public static async Task<NoticeHarness> CreateAsync(
        StorageProvider provider, PostgresServer postgres, SmtpTestServerMode? mail, int refuseFirst = 0, int pollSeconds = 10)
    {
        var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        try
        {
            var smtp = mail is { } mode ? await SmtpTestServer.StartAsync(mode, refuseFirst) : null;
            return Create(database, smtp, pollSeconds);
        }
        catch
        {
            await database.DisposeAsync();
            throw;
        }
    }

    private static NoticeHarness Create(TestRegistryDatabase database, SmtpTestServer? smtp, int pollSeconds)
    {
        var settings = new Dictionary<string, string?>
        {
            ["School:Name"] = SchoolName,
            ["School:TimeZone"] = "Europe/Paris",
            ["School:Language"] = "en",
            ["Notices:From"] = $"{SchoolName} <office@hillside.example>",
            ["Notices:RetryBaseSeconds"] = "1",
            ["Notices:RetryMaxSeconds"] = "60",
            ["Notices:AbsenceGraceMinutes"] = "15",
            ["Notices:PollSeconds"] = pollSeconds.ToString(CultureInfo.InvariantCulture),
        };
        if (smtp is not null)
        {
            settings["Notices:Smtp:Host"] = SmtpTestServer.Host;
            settings["Notices:Smtp:Port"] = smtp.Port.ToString(CultureInfo.InvariantCulture);
        }

        var time = new FakeTimeProvider(Start);
        var logs = new CapturedLog(LogLevel.Trace);
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(settings).Build());
        services.AddLogging(b => b.AddProvider(logs).SetMinimumLevel(LogLevel.Debug));
        services.AddSingleton<TimeProvider>(time);
        // What the registry's hosting registers in the server.
        services.AddSingleton(database.Contexts);
        services.AddSingleton<IStorageReady, StorageAlreadyReady>();
        services.AddSingleton<RegistryMigrator>();
        services.AddOptions<SchoolOptions>().BindConfiguration(SchoolOptions.SectionName);
        services.AddGuardianNotices();
        var provider = services.BuildServiceProvider(new ServiceProviderOptions { ValidateOnBuild = true, ValidateScopes = true });
        return new NoticeHarness(provider, database, smtp, time, logs);
    }

    public RegistryDbContext Open() => Database.Open();

    /// <summary>Starts the migrator and the notice services as the host would; <see cref="DisposeAsync"/> stops them.</summary>
    public async Task StartHostedServicesAsync(CancellationToken cancellationToken)
    {
        await _services.GetRequiredService<RegistryMigrator>().StartAsync(cancellationToken);
        foreach (var service in _services.GetServices<IHostedService>())
        {
            await service.StartAsync(cancellationToken);
        }
    }

    /// <summary>Stops what <see cref="StartHostedServicesAsync"/> started (a no-op for services not started).</summary>
    public async Task StopHostedServicesAsync(CancellationToken cancellationToken)
    {
        foreach (var service in _services.GetServices<IHostedService>().Reverse())
        {
            await service.StopAsync(cancellationToken);
        }

        await _services.GetRequiredService<RegistryMigrator>().StopAsync(cancellationToken);
    }

    /// <summary>A student with the given contacts; returns it with its id and its contacts' ids set.</summary>
    public async Task<Owner> AddOwnerAsync(string name, OwnerKind kind = OwnerKind.Student, params Contact[] contacts)
    {
        var now = Time.GetUtcNow();
        var owner = new Owner { DisplayName = name, Kind = kind, CreatedAt = now, UpdatedAt = now };
        foreach (var contact in contacts)
        {
            contact.CreatedAt = now;
            contact.UpdatedAt = now;
            owner.Contacts.Add(contact);
        }

        await using var db = Open();
        db.Owners.Add(owner);
        await db.SaveChangesAsync(TestContext.Current.CancellationToken);
        return owner;
    }

    public static Contact Contact(string email, bool arrival = true, bool absence = true, string? language = null) =>
        new() { Name = email, Email = email, Relationship = ContactRelationship.Parent, NotifyArrival = arrival, NotifyAbsence = absence, Language = language };

    /// <summary>Checks <paramref name="student"/> in now, queuing its arrival notices in the same transaction, as the check-in code does.</summary>
    public async Task<CheckIn> CheckInAsync(Owner student)
    {
        var ct = TestContext.Current.CancellationToken;
        var now = Time.GetUtcNow();
        await using var db = Open();
        await using var transaction = await db.Database.BeginTransactionAsync(ct);
        var checkIn = new CheckIn { OwnerId = student.Id, SchoolDate = School.SchoolDate(now), CheckedInAt = now, Source = "reader:FP-01", RecordedAt = now };
        db.CheckIns.Add(checkIn);
        await db.SaveChangesAsync(ct);
        await Notices.QueueArrivalAsync(db, checkIn, student, now, ct);
        await db.SaveChangesAsync(ct);
        await transaction.CommitAsync(ct);
        return checkIn;
    }

    /// <summary>Waits until an entry with <paramref name="eventId"/> is logged (background services log from their own task).</summary>
    public Task WaitForLogAsync(int eventId, TimeSpan timeout) =>
        Eventually.TrueAsync(() => Logs.Entries.Any(e => e.EventId == eventId), $"a log entry {eventId}", timeout);

    public async ValueTask DisposeAsync()
    {
        await StopHostedServicesAsync(CancellationToken.None);
        await _services.DisposeAsync();
        if (_smtp is not null)
        {
            await _smtp.DisposeAsync();
        }

        await Database.DisposeAsync();
    }
}

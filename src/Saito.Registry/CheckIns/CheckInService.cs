using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Registry.CheckIns;

/// <summary>What became of a check-in or check-out.</summary>
public enum CheckInOutcome
{
    /// <summary>A new arrival for the owner's school day.</summary>
    Recorded,

    /// <summary>The owner had already arrived that day (another reader, a second read, a redelivered message): nothing changed.</summary>
    AlreadyCheckedIn,

    /// <summary>A check-in after a check-out the same day: the owner came back.</summary>
    Returned,

    /// <summary>Checked out.</summary>
    CheckedOut,

    /// <summary>A check-out with no arrival that day, or one already checked out: nothing changed.</summary>
    NotCheckedIn,

    /// <summary>No owner with that id, or one no longer active.</summary>
    UnknownOwner,

    /// <summary>A reader's check-in or check-out stamped outside <see cref="CheckInOptions"/>' window around now: nothing changed, no one told.</summary>
    OutsideReaderWindow,
}

public readonly record struct CheckInResult(CheckInOutcome Outcome, CheckIn? CheckIn);

/// <summary>Something to do inside the check-in's transaction (the guardian notices queue their emails here).</summary>
public interface ICheckInObserver
{
    /// <summary>Called before the transaction saves, for a new arrival only; add rows to <paramref name="db"/>, do not save.</summary>
    Task OnArrivedAsync(RegistryDbContext db, CheckIn checkIn, Owner owner, CancellationToken cancellationToken);

    /// <summary>Called after the arrival is committed.</summary>
    void OnCommitted();
}

/// <summary>
/// Records arrivals and departures: from fingerprint readers over MQTT and from staff through the API. One row per
/// owner and school-local date (a unique index), so concurrent readers and redelivered messages converge on one
/// check-in: a second insert that loses the race finds the first and reports <see cref="CheckInOutcome.AlreadyCheckedIn"/>.
/// </summary>
public sealed partial class CheckInService(
    RegistryContextFactory contexts, IOptions<SchoolOptions> school, IOptions<CheckInOptions> options, TimeProvider time, IEnumerable<ICheckInObserver> observers,
    ILogger<CheckInService> logger)
{
    private readonly SchoolOptions _school = school.Value;
    private readonly CheckInOptions _options = options.Value;
    private readonly ICheckInObserver[] _observers = [.. observers];

    /// <summary>
    /// A fingerprint reader's check-in (or check-out, <paramref name="checkOut"/>), taken only when stamped about now
    /// (<see cref="CheckInOptions"/>): a hub may send for any reader, and an old arrival would still email the family
    /// and rewrite a past day. Outside the window: <see cref="CheckInOutcome.OutsideReaderWindow"/>, nothing changed.
    /// The same check-out again is <see cref="CheckInOutcome.CheckedOut"/>, as the first was.
    /// </summary>
    public async Task<CheckInResult> RecordFromReaderAsync(string readerSerial, int ownerId, DateTimeOffset at, bool checkOut, CancellationToken cancellationToken)
    {
        var now = time.GetUtcNow();
        if (at < now.AddSeconds(-_options.ReaderMaxAgeSeconds) || at > now.AddSeconds(_options.ReaderMaxAheadSeconds))
        {
            // Not logged here: ingestion logs it with the dead letter, rate-limited (a hub may send many).
            return new CheckInResult(CheckInOutcome.OutsideReaderWindow, null);
        }

        if (!checkOut)
        {
            return await CheckInAsync(ownerId, at, "reader:" + readerSerial, cancellationToken);
        }

        // The same check-out again (a redelivery after a lost PUBACK, the reader read twice) finds itself recorded.
        var result = await CheckOutAsync(ownerId, at, cancellationToken);
        return result is { Outcome: CheckInOutcome.NotCheckedIn, CheckIn.CheckedOutAt: { } checkedOut } && checkedOut == at
            ? result with { Outcome = CheckInOutcome.CheckedOut }
            : result;
    }

    /// <summary>Checks <paramref name="ownerId"/> in at <paramref name="at"/>; <paramref name="source"/> says how (<c>reader:SN</c>, <c>staff:name</c>).</summary>
    public async Task<CheckInResult> CheckInAsync(int ownerId, DateTimeOffset at, string source, CancellationToken cancellationToken)
    {
        for (int attempt = 0; ; attempt++)
        {
            await using var db = contexts.Create();
            var owner = await db.Owners.SingleOrDefaultAsync(o => o.Id == ownerId && o.Active, cancellationToken);
            if (owner is null)
            {
                return new CheckInResult(CheckInOutcome.UnknownOwner, null);
            }

            var date = _school.SchoolDate(at);
            var existing = await db.CheckIns.SingleOrDefaultAsync(c => c.OwnerId == ownerId && c.SchoolDate == date, cancellationToken);
            if (existing is not null)
            {
                if (existing.CheckedOutAt is { } left && at > left)
                {
                    existing.CheckedOutAt = null;
                    await db.SaveChangesAsync(cancellationToken);
                    LogReturned(ownerId, source);
                    return new CheckInResult(CheckInOutcome.Returned, existing);
                }

                return new CheckInResult(CheckInOutcome.AlreadyCheckedIn, existing);
            }

            var checkIn = new CheckIn { OwnerId = ownerId, SchoolDate = date, CheckedInAt = at, Source = source, RecordedAt = time.GetUtcNow() };
            db.CheckIns.Add(checkIn);
            foreach (var observer in _observers)
            {
                await observer.OnArrivedAsync(db, checkIn, owner, cancellationToken);
            }

            try
            {
                await db.SaveChangesAsync(cancellationToken);
            }
            catch (DbUpdateException) when (attempt == 0)
            {
                // Another reader (or Saito instance) recorded the same owner's arrival between our read and our
                // insert: the unique index refused ours. Read again; it is now AlreadyCheckedIn.
                continue;
            }

            foreach (var observer in _observers)
            {
                observer.OnCommitted();
            }

            LogArrived(ownerId, date.ToString("yyyy-MM-dd", System.Globalization.CultureInfo.InvariantCulture), source);
            return new CheckInResult(CheckInOutcome.Recorded, checkIn);
        }
    }

    /// <summary>Checks <paramref name="ownerId"/> out at <paramref name="at"/> (the day's arrival must exist and be open).</summary>
    public async Task<CheckInResult> CheckOutAsync(int ownerId, DateTimeOffset at, CancellationToken cancellationToken)
    {
        await using var db = contexts.Create();
        if (!await db.Owners.AnyAsync(o => o.Id == ownerId, cancellationToken))
        {
            return new CheckInResult(CheckInOutcome.UnknownOwner, null);
        }

        var date = _school.SchoolDate(at);
        var existing = await db.CheckIns.SingleOrDefaultAsync(c => c.OwnerId == ownerId && c.SchoolDate == date, cancellationToken);
        if (existing is null || existing.CheckedOutAt is not null || at < existing.CheckedInAt)
        {
            return new CheckInResult(CheckInOutcome.NotCheckedIn, existing);
        }

        existing.CheckedOutAt = at;
        await db.SaveChangesAsync(cancellationToken);
        return new CheckInResult(CheckInOutcome.CheckedOut, existing);
    }

    [LoggerMessage(3010, LogLevel.Information, "Owner {OwnerId} checked in for {Date} ({Source})")]
    private partial void LogArrived(int ownerId, string date, string source);

    [LoggerMessage(3011, LogLevel.Information, "Owner {OwnerId} came back after a check-out ({Source})")]
    private partial void LogReturned(int ownerId, string source);
}

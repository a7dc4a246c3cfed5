using System.ComponentModel.DataAnnotations;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;
using Saito.Registry.Notices;

namespace Saito.Server.Api;

public sealed record NoticeView(
    long Id, NoticeKind Kind, NoticeState State, int OwnerId, int ContactId, int? SessionId, string ToAddress, string Language,
    int Attempts, DateTimeOffset CreatedAt, DateTimeOffset NextAttemptAt, DateTimeOffset? SentAt, string? LastError, string MessageId)
{
    /// <summary>
    /// The notice as <paramref name="user"/> may see it: the family's address only for roles that may read contacts
    /// (<see cref="ApiPolicies.ReadContacts"/>); ops, who run the outbox, see <c>(hidden)</c>, and the last error without
    /// any address in it (a mail server's refusal names the recipient; the sender stores it redacted, rows from before
    /// are redacted here).
    /// </summary>
    public static NoticeView Of(Notice n, System.Security.Claims.ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(n);
        bool addresses = MaySeeAddresses(user);
        return new(n.Id, n.Kind, n.State, n.OwnerId, n.ContactId, n.SessionId, addresses ? n.ToAddress : Hidden, n.Language, n.Attempts, n.CreatedAt,
            n.NextAttemptAt, n.SentAt, addresses ? n.LastError : NoticeErrors.Redact(n.LastError, n.ToAddress), n.MessageId);
    }

    public const string Hidden = "(hidden)";

    private static bool MaySeeAddresses(System.Security.Claims.ClaimsPrincipal user) => ApiPolicies.Roles[ApiPolicies.ReadContacts].Any(user.IsInRole);
}

public sealed class NoticeQuery
{
    /// <summary><c>pending</c>, <c>sent</c> or <c>failed</c>.</summary>
    [StringLength(16)]
    public string? State { get; set; }

    public int? OwnerId { get; set; }
}

/// <summary>The guardian notices' outbox: what was sent, what waits, what failed and why (docs/notices.md).</summary>
internal static class NoticeEndpoints
{
    public static void MapNoticeEndpoints(this RouteGroupBuilder api)
    {
        var notices = api.MapGroup("/notices").WithTags("Notices").RequireAuthorization(ApiPolicies.ReadNotices);
        notices.MapGet("/", ListAsync).WithSummary("Notices, newest first; filter by state and owner");
        notices.MapGet("/{id:long}", async (long id, System.Security.Claims.ClaimsPrincipal user, RegistryDbContext db, CancellationToken ct) =>
            await db.Notices.AsNoTracking().SingleOrDefaultAsync(n => n.Id == id, ct) is { } notice ? TypedResults.Ok(NoticeView.Of(notice, user)) : Problems.NotFound("notice", id))
            .WithSummary("One notice and its delivery state");
        notices.MapPost("/{id:long}/retry", RetryAsync).WithSummary("Send a failed notice again (after the mail server is fixed)");
    }

    private static async Task<IResult> ListAsync([AsParameters] NoticeQuery query, [AsParameters] PageQuery page, System.Security.Claims.ClaimsPrincipal user, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var (state, error) = ApiEnums.Parse<NoticeState>(query.State, "state");
        if (error is not null)
        {
            return error;
        }

        var notices = db.Notices.AsNoTracking();
        if (state is { } s)
        {
            notices = notices.Where(n => n.State == s);
        }

        if (query.OwnerId is { } ownerId)
        {
            notices = notices.Where(n => n.OwnerId == ownerId);
        }

        return TypedResults.Ok(await notices.OrderByDescending(n => n.Id).PageAsync(page, n => NoticeView.Of(n, user), cancellationToken));
    }

    private static async Task<IResult> RetryAsync(System.Security.Claims.ClaimsPrincipal user, long id, RegistryDbContext db, NoticeSignal signal, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Notices.SingleOrDefaultAsync(n => n.Id == id, cancellationToken) is not { } notice)
        {
            return Problems.NotFound("notice", id);
        }

        if (notice.State != NoticeState.Failed)
        {
            return Problems.Conflict($"Notice {id} is {ApiEnums.Name(notice.State)}: only a failed notice is retried.");
        }

        notice.State = NoticeState.Pending;
        notice.Attempts = 0;
        notice.NextAttemptAt = time.GetUtcNow();
        await db.SaveChangesAsync(cancellationToken);
        signal.Notify();
        return TypedResults.Ok(NoticeView.Of(notice, user));
    }
}

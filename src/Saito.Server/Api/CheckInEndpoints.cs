using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.CheckIns;
using Saito.Registry.Hosting;

namespace Saito.Server.Api;

public sealed record CheckInView(long Id, int OwnerId, string OwnerName, DateOnly SchoolDate, DateTimeOffset CheckedInAt, DateTimeOffset? CheckedOutAt, string Source);

public sealed record CheckInRequest([property: Required] int? OwnerId, DateTimeOffset? At);

public sealed record CheckInAnswer(CheckInOutcome Outcome, CheckInView? CheckIn);

public sealed class CheckInQuery
{
    /// <summary>The school-local date (YYYY-MM-DD); today when unset.</summary>
    public DateOnly? Date { get; set; }

    public int? OwnerId { get; set; }
}

/// <summary>Who arrived: the day's check-ins, and checking someone in or out by hand.</summary>
internal static class CheckInEndpoints
{
    public static void MapCheckInEndpoints(this RouteGroupBuilder api)
    {
        var checkIns = api.MapGroup("/check-ins").WithTags("Check-ins");
        checkIns.MapGet("/", ListAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("Check-ins of a school day (today by default)");
        checkIns.MapPost("/", CheckInAsync).RequireAuthorization(ApiPolicies.CheckIn).WithSummary("Check an owner in by hand (once a day; again is harmless)");
        checkIns.MapPost("/check-out", CheckOutAsync).RequireAuthorization(ApiPolicies.CheckIn).WithSummary("Check an owner out by hand");
    }

    private static Task<Page<CheckInView>> ListAsync([AsParameters] CheckInQuery query, [AsParameters] PageQuery page, RegistryDbContext db,
        IOptions<SchoolOptions> school, TimeProvider time, CancellationToken cancellationToken)
    {
        var date = query.Date ?? school.Value.SchoolDate(time.GetUtcNow());
        var checkIns = db.CheckIns.AsNoTracking().Where(c => c.SchoolDate == date);
        if (query.OwnerId is { } ownerId)
        {
            checkIns = checkIns.Where(c => c.OwnerId == ownerId);
        }

        return checkIns.OrderBy(c => c.CheckedInAt).ThenBy(c => c.Id)
            .Select(c => new CheckInView(c.Id, c.OwnerId, c.Owner!.DisplayName, c.SchoolDate, c.CheckedInAt, c.CheckedOutAt, c.Source))
            .PageAsync(page, v => v, cancellationToken);
    }

    private static async Task<IResult> CheckInAsync(CheckInRequest request, ClaimsPrincipal user, CheckInService service, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await ForbiddenAsync(request, user, db, cancellationToken) is { } forbidden)
        {
            return forbidden;
        }

        var result = await service.CheckInAsync(request.OwnerId!.Value, request.At ?? time.GetUtcNow(), "staff:" + (user.Identity?.Name ?? "unknown"), cancellationToken);
        return await AnswerAsync(result, db, cancellationToken);
    }

    private static async Task<IResult> CheckOutAsync(CheckInRequest request, ClaimsPrincipal user, CheckInService service, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await ForbiddenAsync(request, user, db, cancellationToken) is { } forbidden)
        {
            return forbidden;
        }

        var result = await service.CheckOutAsync(request.OwnerId!.Value, request.At ?? time.GetUtcNow(), cancellationToken);
        if (result.Outcome == CheckInOutcome.NotCheckedIn)
        {
            return Problems.Conflict($"Owner {request.OwnerId} is not checked in on that day (or was checked out already).");
        }

        return await AnswerAsync(result, db, cancellationToken);
    }

    /// <summary>
    /// A teacher or aide checks in and out only the students on the rosters of their classes (as the check-in board
    /// shows them); an admin anyone. Answers 403 otherwise, before anything is recorded or a guardian told.
    /// </summary>
    private static async Task<IResult?> ForbiddenAsync(CheckInRequest request, ClaimsPrincipal user, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (Dashboard.DashboardAccess.IsAdmin(user) || !await db.Owners.AnyAsync(o => o.Id == request.OwnerId, cancellationToken))
        {
            return null; // an unknown owner is answered as before (404)
        }

        return await Dashboard.DashboardAccess.IsOnCallersRosterAsync(db, user, request.OwnerId!.Value, cancellationToken)
            ? null
            : Problems.Of(StatusCodes.Status403Forbidden, "Forbidden", $"Owner {request.OwnerId} is not on the roster of a class you are listed on.");
    }

    private static async Task<IResult> AnswerAsync(CheckInResult result, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (result.Outcome == CheckInOutcome.UnknownOwner || result.CheckIn is null)
        {
            return Problems.NotFound("active owner", "with that id");
        }

        long id = result.CheckIn.Id;
        var view = await db.CheckIns.AsNoTracking().Where(c => c.Id == id)
            .Select(c => new CheckInView(c.Id, c.OwnerId, c.Owner!.DisplayName, c.SchoolDate, c.CheckedInAt, c.CheckedOutAt, c.Source))
            .SingleAsync(cancellationToken);
        var answer = new CheckInAnswer(result.Outcome, view);
        return result.Outcome == CheckInOutcome.Recorded ? TypedResults.Created($"/api/check-ins?date={view.SchoolDate:yyyy-MM-dd}&ownerId={view.OwnerId}", answer) : TypedResults.Ok(answer);
    }
}

using System.Globalization;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;

namespace Saito.Server.Api;

/// <summary>
/// Optimistic concurrency for what staff edit: GET returns <c>ETag: "N"</c> (the row's version); a change must send
/// <c>If-Match: "N"</c>. No If-Match: 428; an older version: 412, nothing written. The database re-checks the version
/// in the UPDATE itself, so two saves racing between the check and the write cannot both win.
/// </summary>
internal static class Versions
{
    public static string ETag(IVersioned row) => ETag(row.Version);

    public static string ETag(int version) => "\"" + version.ToString(CultureInfo.InvariantCulture) + "\"";

    /// <summary>Null when the request's If-Match names the row's version (and the row is then bumped); else the error to return.</summary>
    public static IResult? CheckAndBump(HttpContext http, IVersioned row)
    {
        string? ifMatch = http.Request.Headers.IfMatch;
        if (string.IsNullOrEmpty(ifMatch))
        {
            return Problems.Of(StatusCodes.Status428PreconditionRequired, "If-Match required",
                $"Send If-Match with the ETag from the last GET (now {ETag(row)}), so a change made meanwhile by someone else is not overwritten.");
        }

        if (ifMatch.Trim() != "*" && ifMatch.Trim() != ETag(row) && ifMatch.Trim() != "W/" + ETag(row))
        {
            return Stale(row);
        }

        row.Version++;
        return null;
    }

    public static IResult Stale(IVersioned row) => Problems.Of(StatusCodes.Status412PreconditionFailed, "Changed by someone else",
        $"The record changed since you read it (it is now at {ETag(row)}). GET it again, reapply your change, and send the new ETag.");

    /// <summary>A JSON result with the row's ETag.</summary>
    public static IResult WithETag<T>(HttpContext http, IVersioned row, T body, int status = StatusCodes.Status200OK, string? location = null)
    {
        http.Response.Headers.ETag = ETag(row);
        return status == StatusCodes.Status201Created ? TypedResults.Created(location, body) : TypedResults.Ok(body);
    }

    /// <summary>Stores a new row and answers 201 with its ETag, its view, and where it is (<paramref name="location"/> of the stored row).</summary>
    public static async Task<IResult> CreatedAsync<TRow, TView>(HttpContext http, RegistryDbContext db, TRow row, Func<TRow, TView> view,
        Func<TRow, string> location, CancellationToken cancellationToken)
        where TRow : class, IVersioned
    {
        db.Add(row);
        await db.SaveChangesAsync(cancellationToken);
        return WithETag(http, row, view(row), StatusCodes.Status201Created, location(row));
    }

    /// <summary>Saves a row whose version was bumped: null when saved; 412 when a concurrent save got there first.</summary>
    public static async Task<IResult?> SaveAsync(RegistryDbContext db, IVersioned row, CancellationToken cancellationToken)
    {
        try
        {
            await db.SaveChangesAsync(cancellationToken);
            return null;
        }
        catch (DbUpdateConcurrencyException)
        {
            row.Version--;
            return Stale(row);
        }
    }
}

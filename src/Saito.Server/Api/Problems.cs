namespace Saito.Server.Api;

/// <summary>RFC 9457 problem details for every error the API answers.</summary>
internal static class Problems
{
    public static IResult Of(int status, string title, string detail) => TypedResults.Problem(detail: detail, statusCode: status, title: title);

    public static IResult NotFound(string what, object id) => Of(StatusCodes.Status404NotFound, "Not found", $"There is no {what} {id}.");

    public static IResult Conflict(string detail) => Of(StatusCodes.Status409Conflict, "Conflict", detail);

    public static IResult Invalid(string field, string message) => TypedResults.ValidationProblem(new Dictionary<string, string[]> { [field] = [message] });

    /// <summary>A time range that is empty, reversed, or starts before 1970 (readings and charts).</summary>
    public static IResult BadRange() => Invalid("to", "to must be after from (and from after 1970).");
}

using System.Text.Json;
using Microsoft.AspNetCore.Diagnostics;

namespace Saito.Server.Api;

/// <summary>
/// A request the API cannot read (JSON that does not parse, an enum value that does not exist, a time without an offset,
/// a query value of the wrong type) answers 400 with a problem that says what was wrong, instead of an empty 400.
/// </summary>
internal sealed class BadRequestHandler(IProblemDetailsService problems) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext httpContext, Exception exception, CancellationToken cancellationToken)
    {
        if (exception is not BadHttpRequestException bad)
        {
            return false;
        }

        string detail = bad.InnerException is JsonException json
            ? $"The request body could not be read{(json.Path is { Length: > 1 } path ? $" at {path}" : string.Empty)}: {FirstSentence(json.Message)}"
            : bad.Message;
        httpContext.Response.StatusCode = bad.StatusCode;
        return await problems.TryWriteAsync(new ProblemDetailsContext
        {
            HttpContext = httpContext,
            ProblemDetails = { Status = bad.StatusCode, Title = "Bad request", Detail = detail },
        });
    }

    private static string FirstSentence(string message)
    {
        int end = message.IndexOf(" Path:", StringComparison.Ordinal);
        return end > 0 ? message[..end] : message;
    }
}

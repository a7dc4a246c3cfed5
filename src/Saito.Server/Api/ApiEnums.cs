using System.Text.Json;

namespace Saito.Server.Api;

/// <summary>Enum values in query strings as in JSON: lower case with dashes (<c>not-arrived</c>).</summary>
internal static class ApiEnums
{
    public static string Name<T>(T value)
        where T : struct, Enum => JsonNamingPolicy.KebabCaseLower.ConvertName(value.ToString());

    /// <summary>Null and no error when <paramref name="text"/> is empty; the value; or a 400 naming the accepted values.</summary>
    public static (T? Value, IResult? Error) Parse<T>(string? text, string field)
        where T : struct, Enum
    {
        if (string.IsNullOrEmpty(text))
        {
            return (null, null);
        }

        foreach (var value in Enum.GetValues<T>())
        {
            if (string.Equals(Name(value), text, StringComparison.Ordinal))
            {
                return (value, null);
            }
        }

        return (null, Problems.Invalid(field, $"'{text}' is not one of {string.Join(", ", Enum.GetValues<T>().Select(v => Name(v)))}."));
    }
}

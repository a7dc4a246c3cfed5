using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Saito.Server.Api;

/// <summary>The API's JSON: camelCase names, kebab-case enum values, times with an explicit offset both ways.</summary>
internal static class ApiJson
{
    public static void Configure(JsonSerializerOptions options)
    {
        options.PropertyNamingPolicy = JsonNamingPolicy.CamelCase;
        options.Converters.Add(new JsonStringEnumConverter(JsonNamingPolicy.KebabCaseLower, allowIntegerValues: false));
        options.Converters.Add(new ExplicitOffsetConverter());
    }

    /// <summary>
    /// Reads RFC 3339 times that carry <c>Z</c> or an offset (a time without one is refused: it would be taken as the
    /// server's local time); writes UTC with <c>+00:00</c>, to the microsecond.
    /// </summary>
    internal sealed class ExplicitOffsetConverter : JsonConverter<DateTimeOffset>
    {
        public override DateTimeOffset Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
        {
            string text = reader.GetString() ?? throw new JsonException("a time must be a string such as 2026-11-26T09:00:00Z");
            if (!HasOffset(text) || !DateTimeOffset.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.None, out var value))
            {
                throw new JsonException($"'{(text.Length > 40 ? text[..40] : text)}' is not a time with an offset: write it as 2026-11-26T09:00:00Z or 2026-11-26T10:00:00+01:00");
            }

            return value;
        }

        public override void Write(Utf8JsonWriter writer, DateTimeOffset value, JsonSerializerOptions options) =>
            writer.WriteStringValue(value.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.ffffffzzz", CultureInfo.InvariantCulture));

        private static bool HasOffset(string text)
        {
            int t = text.IndexOfAny(['T', 't', ' ']);
            if (t < 0)
            {
                return false;
            }

            var time = text.AsSpan(t + 1);
            return time.EndsWith("Z") || time.EndsWith("z") || time.IndexOfAny('+', '-') >= 0;
        }
    }
}

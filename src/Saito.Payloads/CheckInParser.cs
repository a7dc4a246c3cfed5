using System.Diagnostics.CodeAnalysis;
using System.Text.Json;

namespace Saito.Payloads;

/// <summary>A check-in as a fingerprint reader sends it: who, when, and whether arriving or leaving.</summary>
/// <param name="OwnerId">The enrolled owner's id in the registry.</param>
/// <param name="At">When the finger was read (UTC); the time Saito received the message when the reader sent none.</param>
/// <param name="CheckOut">True for <c>"action":"out"</c>.</param>
public readonly record struct CheckInMessage(int OwnerId, DateTimeOffset At, bool CheckOut);

/// <summary>
/// The payload of <c>saito/{hub}/{reader}/checkin</c>: a JSON object <c>{"owner": 17, "ts": "2026-11-26T08:59:12Z",
/// "action": "in"}</c>. <c>owner</c> is required (a positive integer); <c>ts</c> (RFC 3339 with a zone) is optional
/// and must lie within the same window as a reading's (<see cref="PayloadLimits.MaxFutureSkewSeconds"/> ahead,
/// <see cref="PayloadLimits.MaxAgeDays"/> back); <c>action</c> is <c>in</c> (default) or <c>out</c>. Unknown members
/// are ignored, so a reader may add its own (a match score, a finger index).
/// </summary>
public static class CheckInParser
{
    /// <summary>A check-in payload is small; anything longer is refused unread.</summary>
    public const int MaxBytes = 4096;

    public static bool TryParse(ReadOnlySpan<byte> payload, DateTime receivedAtUtc, PayloadLimits limits,
        out CheckInMessage message, [NotNullWhen(false)] out string? error)
    {
        ArgumentNullException.ThrowIfNull(limits);
        message = default;
        if (payload.Length > MaxBytes)
        {
            error = FormattableString.Invariant($"the check-in payload is {payload.Length} bytes; at most {MaxBytes} are read");
            return false;
        }

        if (payload is [0xEF, 0xBB, 0xBF, ..])
        {
            payload = payload[3..];
        }

        int? owner = null;
        long? ticks = null;
        bool checkOut = false;
        try
        {
            var reader = new Utf8JsonReader(payload, new JsonReaderOptions { MaxDepth = 4 });
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                error = "the check-in payload must be a JSON object such as {\"owner\":17,\"ts\":\"2026-11-26T08:59:12Z\"}";
                return false;
            }

            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                string name = reader.GetString()!;
                reader.Read();
                switch (name)
                {
                    case "owner" when reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out int id) && id > 0:
                        owner = id;
                        break;
                    case "owner":
                        error = "check-in \"owner\" must be a positive integer: the enrolled owner's id";
                        return false;
                    case "ts" when reader.TokenType == JsonTokenType.String:
                        var result = IsoTimestamp.TryParse(reader.ValueSpan, out long utcTicks);
                        if (result != IsoTimestamp.Result.Ok || reader.ValueIsEscaped)
                        {
                            error = result == IsoTimestamp.Result.NoZone
                                ? "check-in \"ts\" has no time zone: add Z or an offset such as +01:00"
                                : "check-in \"ts\" must be an RFC 3339 time such as 2026-11-26T08:59:12Z";
                            return false;
                        }

                        ticks = utcTicks;
                        break;
                    case "ts" when reader.TokenType != JsonTokenType.Null:
                        error = "check-in \"ts\" must be a string such as \"2026-11-26T08:59:12Z\"";
                        return false;
                    case "action" when reader.TokenType == JsonTokenType.String && reader.ValueTextEquals("in"u8):
                        checkOut = false;
                        break;
                    case "action" when reader.TokenType == JsonTokenType.String && reader.ValueTextEquals("out"u8):
                        checkOut = true;
                        break;
                    case "action":
                        error = "check-in \"action\" must be \"in\" or \"out\"";
                        return false;
                    default:
                        reader.Skip();
                        break;
                }
            }

            if (reader.TokenType != JsonTokenType.EndObject || reader.Read())
            {
                error = "the check-in payload must be one JSON object";
                return false;
            }
        }
        catch (JsonException ex)
        {
            error = "the check-in payload is not valid JSON: " + ex.Message;
            return false;
        }
        catch (InvalidOperationException ex)
        {
            // GetString on a property name that is not valid UTF-8 (or an escaped lone surrogate, "\udc00").
            error = "the check-in payload holds a name that is not valid text: " + ex.Message;
            return false;
        }

        if (owner is null)
        {
            error = "the check-in payload has no \"owner\": the enrolled owner's id is required";
            return false;
        }

        long received = receivedAtUtc.Ticks;
        long at = ticks ?? received;
        if (at > received + (Math.Max(0, limits.MaxFutureSkewSeconds) * TimeSpan.TicksPerSecond))
        {
            error = FormattableString.Invariant($"check-in \"ts\" is more than {limits.MaxFutureSkewSeconds} s after Saito received it (Ingestion:MaxFutureSkewSeconds): is the reader's clock right?");
            return false;
        }

        if (at < received - (Math.Max(0, limits.MaxAgeDays) * TimeSpan.TicksPerDay))
        {
            error = FormattableString.Invariant($"check-in \"ts\" is more than {limits.MaxAgeDays} days old (Ingestion:MaxAgeDays)");
            return false;
        }

        // Microseconds, as every time Saito stores.
        at -= at % (TimeSpan.TicksPerMillisecond / 1000);
        message = new CheckInMessage(owner.Value, new DateTimeOffset(at, TimeSpan.Zero), checkOut);
        error = null;
        return true;
    }
}

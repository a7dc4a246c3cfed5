namespace Saito.Payloads;

/// <summary>
/// RFC 3339 / ISO 8601 extended date-times, UTF-8, without allocating:
/// <c>YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm|±hhmm)</c>. <c>T</c> may be <c>t</c> or a space and <c>Z</c> may
/// be <c>z</c> (RFC 3339 allows both); the fraction may have any number of digits (those below 100 ns are
/// dropped; <see cref="Saito.Readings.ReadingTime"/> then keeps microseconds). A time without a zone is
/// refused: a hub on local time would otherwise be silently hours off.
/// </summary>
internal static class IsoTimestamp
{
    public enum Result
    {
        Ok,
        Invalid,
        NoZone,
        LeapSecond,
    }

    public static Result TryParse(ReadOnlySpan<byte> s, out long utcTicks)
    {
        utcTicks = 0;
        if (s.Length < 19 || s[4] != (byte)'-' || s[7] != (byte)'-' || s[10] is not ((byte)'T' or (byte)'t' or (byte)' ')
            || s[13] != (byte)':' || s[16] != (byte)':')
        {
            return Result.Invalid;
        }

        if (!TryDigits(s, 0, 4, out int year) || !TryDigits(s, 5, 2, out int month) || !TryDigits(s, 8, 2, out int day)
            || !TryDigits(s, 11, 2, out int hour) || !TryDigits(s, 14, 2, out int minute) || !TryDigits(s, 17, 2, out int second))
        {
            return Result.Invalid;
        }

        if (year < 1 || month is < 1 or > 12 || day < 1 || day > DateTime.DaysInMonth(year, month) || hour > 23 || minute > 59)
        {
            return Result.Invalid;
        }

        if (second == 60)
        {
            return Result.LeapSecond;
        }

        if (second > 59)
        {
            return Result.Invalid;
        }

        int i = 19;
        long fractionTicks = 0;
        if (i < s.Length && s[i] is (byte)'.' or (byte)',')
        {
            i++;
            int start = i;
            long scale = TimeSpan.TicksPerSecond / 10;
            for (; i < s.Length && IsDigit(s[i]); i++)
            {
                fractionTicks += (s[i] - '0') * scale;
                scale /= 10;
            }

            if (i == start)
            {
                return Result.Invalid;
            }
        }

        if (i == s.Length)
        {
            return Result.NoZone;
        }

        long offsetTicks = 0;
        byte zone = s[i];
        if (zone is (byte)'Z' or (byte)'z')
        {
            i++;
        }
        else if (zone is (byte)'+' or (byte)'-')
        {
            i++;
            if (!TryDigits(s, i, 2, out int offsetHours))
            {
                return Result.Invalid;
            }

            i += 2;
            int offsetMinutes = 0;
            if (i < s.Length)
            {
                if (s[i] == (byte)':')
                {
                    i++;
                }

                if (!TryDigits(s, i, 2, out offsetMinutes))
                {
                    return Result.Invalid;
                }

                i += 2;
            }

            if (offsetHours > 18 || offsetMinutes > 59)
            {
                return Result.Invalid;
            }

            offsetTicks = ((offsetHours * 60) + offsetMinutes) * TimeSpan.TicksPerMinute;
            if (zone == (byte)'-')
            {
                offsetTicks = -offsetTicks;
            }
        }
        else
        {
            return Result.Invalid;
        }

        if (i != s.Length)
        {
            return Result.Invalid;
        }

        long local = new DateTime(year, month, day, hour, minute, second, DateTimeKind.Unspecified).Ticks + fractionTicks;
        utcTicks = local - offsetTicks;
        return Result.Ok;
    }

    private static bool TryDigits(ReadOnlySpan<byte> s, int start, int count, out int value)
    {
        value = 0;
        if (start + count > s.Length)
        {
            return false;
        }

        for (int i = start; i < start + count; i++)
        {
            if (!IsDigit(s[i]))
            {
                return false;
            }

            value = (value * 10) + (s[i] - '0');
        }

        return true;
    }

    private static bool IsDigit(byte b) => (uint)(b - '0') <= 9;
}

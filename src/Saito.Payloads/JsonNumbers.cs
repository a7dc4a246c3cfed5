namespace Saito.Payloads;

/// <summary>Exact decimal arithmetic on the text of a JSON number, for timestamps: no double rounding.</summary>
internal static class JsonNumbers
{
    private static readonly ulong[] PowersOf10 =
    [
        1UL, 10UL, 100UL, 1_000UL, 10_000UL, 100_000UL, 1_000_000UL, 10_000_000UL, 100_000_000UL,
        1_000_000_000UL, 10_000_000_000UL, 100_000_000_000UL, 1_000_000_000_000UL, 10_000_000_000_000UL,
        100_000_000_000_000UL, 1_000_000_000_000_000UL, 10_000_000_000_000_000UL, 100_000_000_000_000_000UL,
        1_000_000_000_000_000_000UL, 10_000_000_000_000_000_000UL,
    ];

    /// <summary>
    /// <paramref name="number"/> (the text of a JSON number, as <c>Utf8JsonReader</c> validated it) times
    /// 10^<paramref name="scale"/>, truncated toward zero: <c>1700000000123.4567</c> at scale 4 (milliseconds to
    /// ticks) is exactly 17000000001234567. False when the result does not fit a long.
    /// </summary>
    public static bool TryParseScaled(ReadOnlySpan<byte> number, int scale, out long value)
    {
        value = 0;
        int i = 0;
        bool negative = false;
        if (i < number.Length && number[i] == (byte)'-')
        {
            negative = true;
            i++;
        }

        // At least 19 significant digits are kept exactly (mantissa * 10 + 9 still fits a ulong); integer digits
        // beyond raise the exponent, fraction digits beyond are dropped (truncation).
        const ulong Capacity = (ulong.MaxValue - 9) / 10;
        ulong mantissa = 0;
        int exponent = 0;
        for (; i < number.Length && IsDigit(number[i]); i++)
        {
            if (mantissa <= Capacity)
            {
                mantissa = (mantissa * 10) + (uint)(number[i] - '0');
            }
            else
            {
                exponent++;
            }
        }

        if (i < number.Length && number[i] == (byte)'.')
        {
            for (i++; i < number.Length && IsDigit(number[i]); i++)
            {
                if (mantissa <= Capacity)
                {
                    mantissa = (mantissa * 10) + (uint)(number[i] - '0');
                    exponent--;
                }
            }
        }

        if (i < number.Length && (number[i] | 0x20) == (byte)'e')
        {
            i++;
            bool negativeExponent = false;
            if (i < number.Length && number[i] is (byte)'+' or (byte)'-')
            {
                negativeExponent = number[i] == (byte)'-';
                i++;
            }

            int written = 0;
            for (; i < number.Length && IsDigit(number[i]); i++)
            {
                if (written < 100_000)
                {
                    written = (written * 10) + (number[i] - '0');
                }
            }

            exponent += negativeExponent ? -written : written;
        }

        if (i != number.Length)
        {
            return false;
        }

        if (mantissa == 0)
        {
            return true;
        }

        exponent += scale;
        ulong magnitude;
        if (exponent >= 0)
        {
            if (exponent >= PowersOf10.Length)
            {
                return false;
            }

            ulong power = PowersOf10[exponent];
            if (mantissa > long.MaxValue / power)
            {
                return false;
            }

            magnitude = mantissa * power;
        }
        else
        {
            magnitude = -exponent >= PowersOf10.Length ? 0 : mantissa / PowersOf10[-exponent];
        }

        if (magnitude > long.MaxValue)
        {
            return false;
        }

        value = negative ? -(long)magnitude : (long)magnitude;
        return true;
    }

    private static bool IsDigit(byte b) => (uint)(b - '0') <= 9;
}

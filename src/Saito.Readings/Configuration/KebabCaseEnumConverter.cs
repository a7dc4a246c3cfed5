using System.ComponentModel;
using System.Globalization;

namespace Saito.Readings.Configuration;

/// <summary>
/// Lets configuration name enum values as they are written in docs: <c>sequential-guid</c>, <c>sqlserver</c>,
/// <c>SequentialGuid</c> all work (case, hyphens and underscores ignored). An unknown name becomes the
/// undefined value -1 instead of throwing, so the options validator can report it with the other failures.
/// </summary>
public sealed class KebabCaseEnumConverter<TEnum> : EnumConverter
    where TEnum : struct, Enum
{
    public KebabCaseEnumConverter()
        : base(typeof(TEnum))
    {
    }

    public override object? ConvertFrom(ITypeDescriptorContext? context, CultureInfo? culture, object value)
    {
        if (value is string text)
        {
            return KebabCaseEnum.Parse<TEnum>(text);
        }

        return base.ConvertFrom(context, culture, value);
    }

}

public static class KebabCaseEnum
{
    /// <summary>Parses <c>sequential-guid</c>, <c>SequentialGuid</c>, <c>sqlserver</c>...; an unknown name gives the undefined value -1.</summary>
    public static TEnum Parse<TEnum>(string text)
        where TEnum : struct, Enum
    {
        ArgumentNullException.ThrowIfNull(text);
        string plain = text.Replace("-", string.Empty, StringComparison.Ordinal).Replace("_", string.Empty, StringComparison.Ordinal).Trim();
        // Enum.TryParse also takes numbers ("1", "+1") and flag lists ("natural,guid" would be Guid): names only.
        if (plain.Length > 0 && char.IsAsciiLetter(plain[0]) && !plain.Contains(',', StringComparison.Ordinal)
            && Enum.TryParse(plain, ignoreCase: true, out TEnum parsed))
        {
            return parsed;
        }

        return (TEnum)Enum.ToObject(typeof(TEnum), -1);
    }
}

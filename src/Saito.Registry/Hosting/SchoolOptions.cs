using Microsoft.Extensions.Options;

namespace Saito.Registry.Hosting;

/// <summary>The <c>School</c> section: where the school is in time, and how it speaks to families.</summary>
public sealed class SchoolOptions
{
    public const string SectionName = "School";

    /// <summary>The school's name, in notices.</summary>
    public string Name { get; set; } = "Our school";

    /// <summary>IANA time zone of the timetable and of school days (check-ins are per school-local date).</summary>
    public string TimeZone { get; set; } = "Etc/UTC";

    /// <summary>Language of notices unless a contact has their own: <c>en</c> or <c>fr</c>.</summary>
    public string Language { get; set; } = "en";

    /// <summary>
    /// How many school-local days after today the session planner keeps in the database (today is always planned);
    /// 0 to 366. The planner runs at start and every hour.
    /// </summary>
    public int PlanDays { get; set; } = 14;

    /// <summary>The longest <see cref="PlanDays"/>: a year.</summary>
    public const int MaxPlanDays = 366;

    /// <summary>The languages notices are written in.</summary>
    public static IReadOnlyList<string> Languages { get; } = ["en", "fr"];

    public TimeZoneInfo Zone => TimeZoneInfo.FindSystemTimeZoneById(TimeZone);

    /// <summary>The school-local date of an instant.</summary>
    public DateOnly SchoolDate(DateTimeOffset instant) => DateOnly.FromDateTime(TimeZoneInfo.ConvertTime(instant, Zone).DateTime);
}

internal sealed class SchoolOptionsValidator : IValidateOptions<SchoolOptions>
{
    public ValidateOptionsResult Validate(string? name, SchoolOptions options)
    {
        var failures = new List<string>();
        if (!TimeZoneInfo.TryFindSystemTimeZoneById(options.TimeZone ?? string.Empty, out _))
        {
            failures.Add($"School:TimeZone '{options.TimeZone}' is not a time zone this machine knows; use an IANA name such as Europe/London or America/New_York.");
        }

        if (!SchoolOptions.Languages.Contains(options.Language))
        {
            failures.Add($"School:Language must be one of {string.Join(", ", SchoolOptions.Languages)} (got '{options.Language}').");
        }

        if (options.PlanDays is < 0 or > SchoolOptions.MaxPlanDays)
        {
            failures.Add($"School:PlanDays must be 0 to {SchoolOptions.MaxPlanDays} (got {options.PlanDays}).");
        }

        if (string.IsNullOrWhiteSpace(options.Name))
        {
            failures.Add("School:Name must not be empty (it appears in every notice).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

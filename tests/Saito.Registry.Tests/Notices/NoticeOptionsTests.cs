using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Saito.Registry.Model;
using Saito.Registry.Notices;

namespace Saito.Registry.Tests.Notices;

/// <summary>The <c>Notices</c> section: its checks, and the backoff it defines. No database, no mail server.</summary>
public sealed class NoticeOptionsTests
{
    [Fact]
    public void Defaults_are_valid_and_leave_the_sender_off()
    {
        var options = Bind([]);

        options.SenderEnabled.ShouldBeFalse();
        options.Smtp.Port.ShouldBe(25);
        options.MaxAttempts.ShouldBe(8);
        options.AbsenceGraceMinutes.ShouldBe(15);
    }

    [Fact]
    public void Security_is_read_in_kebab_case()
    {
        Bind(new() { ["Notices:Smtp:Host"] = "mail.example.org", ["Notices:From"] = "school@example.org", ["Notices:Smtp:Security"] = "ssl-on-connect" })
            .Smtp.Security.ShouldBe(SmtpSecurity.SslOnConnect);
        Bind(new() { ["Notices:Smtp:Security"] = "starttls" }).Smtp.Security.ShouldBe(SmtpSecurity.StartTls);
    }

    [Fact]
    public void Bad_settings_fail_at_start_with_every_reason()
    {
        var failure = Should.Throw<OptionsValidationException>(() => Bind(new()
        {
            ["Notices:Smtp:Host"] = "mail.example.org",
            ["Notices:Smtp:Security"] = "tls-please",
            ["Notices:Smtp:User"] = "saito",
            ["Notices:RetryBaseSeconds"] = "60",
            ["Notices:RetryMaxSeconds"] = "30",
            ["Notices:PollSeconds"] = "0",
        }));

        failure.Failures.ShouldContain(f => f.Contains("Notices:From is required", StringComparison.Ordinal));
        failure.Failures.ShouldContain(f => f.Contains("none, starttls or ssl-on-connect", StringComparison.Ordinal));
        failure.Failures.ShouldContain(f => f.Contains("User and Notices:Smtp:Password go together", StringComparison.Ordinal));
        failure.Failures.ShouldContain(f => f.Contains("Notices:RetryMaxSeconds", StringComparison.Ordinal));
        failure.Failures.ShouldContain(f => f.Contains("Notices:PollSeconds", StringComparison.Ordinal));
        failure.Failures.Count().ShouldBe(5);
    }

    [Fact]
    public void A_from_address_that_is_not_one_is_refused()
    {
        Should.Throw<OptionsValidationException>(() => Bind(new() { ["Notices:Smtp:Host"] = "mail.example.org", ["Notices:From"] = "the school" }))
            .Message.ShouldContain("'the school' is not an email address");
    }

    [Fact]
    public void Retries_wait_twice_as_long_each_time_up_to_the_cap()
    {
        var options = new NoticeOptions { RetryBaseSeconds = 30, RetryMaxSeconds = 3600 };

        Enumerable.Range(1, 9).Select(a => options.RetryDelay(a).TotalSeconds).ShouldBe([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    }

    [Fact]
    public void A_failure_reason_is_short_and_on_one_line()
    {
        string reason = NoticeSender.Describe(new IOException("connection reset\nby peer " + new string('x', 1000)));

        reason.ShouldStartWith("IOException: connection reset by peer");
        reason.Length.ShouldBe(NoticeSender.ErrorLength);
    }

    [Fact]
    public void The_grace_period_of_a_not_arrived_notice_is_in_its_text_and_a_negative_offset_is_written_with_a_minus()
    {
        var zone = TimeZoneInfo.FindSystemTimeZoneById("America/New_York");
        var text = NoticeTemplates.Render(new NoticeContent(NoticeKind.NotArrived, "en", "Lakeside", "Jo", new DateTimeOffset(2026, 7, 1, 13, 0, 0, TimeSpan.Zero), zone, "Art", 20));

        text.PlainText.ShouldContain("20 minutes after Art started at 09:00 (UTC-04:00) on Wednesday 1 July 2026");
    }

    private static NoticeOptions Bind(Dictionary<string, string?> settings)
    {
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().AddInMemoryCollection(settings).Build());
        services.AddGuardianNotices();
        using var provider = services.BuildServiceProvider();
        return provider.GetRequiredService<IOptions<NoticeOptions>>().Value;
    }
}

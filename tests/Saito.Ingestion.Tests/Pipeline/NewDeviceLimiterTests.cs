using Microsoft.Extensions.Time.Testing;
using Saito.Ingestion.Pipeline;

namespace Saito.Ingestion.Tests.Pipeline;

/// <summary>Ingestion:MaxNewDevicesPerHubPerHour, with a clock the test moves.</summary>
public sealed class NewDeviceLimiterTests
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 25, 9, 0, 0, TimeSpan.Zero));

    [Fact]
    public void Past_the_limit_a_hub_is_refused_until_its_earliest_registration_is_an_hour_old()
    {
        var limiter = new NewDeviceLimiter(3, _time);
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        _time.Advance(TimeSpan.FromMinutes(10));
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        limiter.TryAdmit("hub-1").ShouldBeTrue();

        limiter.TryAdmit("hub-1").ShouldBeFalse();
        _time.Advance(TimeSpan.FromMinutes(49) + TimeSpan.FromSeconds(59));
        limiter.TryAdmit("hub-1").ShouldBeFalse("the first registration is not yet an hour old");
        _time.Advance(TimeSpan.FromSeconds(1));
        limiter.TryAdmit("hub-1").ShouldBeTrue("the first registration left the window, one place is free");
        limiter.TryAdmit("hub-1").ShouldBeFalse("the two of minute 10 are still in it");
        _time.Advance(TimeSpan.FromMinutes(10));
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        limiter.TryAdmit("hub-1").ShouldBeFalse();
    }

    [Fact]
    public void A_refused_attempt_does_not_count_against_the_hub()
    {
        var limiter = new NewDeviceLimiter(1, _time);
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        for (int i = 0; i < 100; i++)
        {
            _time.Advance(TimeSpan.FromSeconds(30));
            limiter.TryAdmit("hub-1").ShouldBeFalse();
        }

        _time.Advance(TimeSpan.FromMinutes(10)); // 60 minutes after the one registration
        limiter.TryAdmit("hub-1").ShouldBeTrue();
    }

    [Fact]
    public void Each_hub_has_its_own_limit()
    {
        var limiter = new NewDeviceLimiter(2, _time);
        limiter.TryAdmit("hub-1").ShouldBeTrue();
        limiter.TryAdmit("hub-1").ShouldBeTrue();

        limiter.TryAdmit("hub-1").ShouldBeFalse();
        limiter.TryAdmit("hub-2").ShouldBeTrue();
        limiter.TryAdmit("hub-2").ShouldBeTrue();
        limiter.TryAdmit("hub-2").ShouldBeFalse();
    }

    [Fact]
    public void Zero_means_no_limit()
    {
        var limiter = new NewDeviceLimiter(0, _time);

        Enumerable.Range(0, 10_000).ShouldAllBe(_ => limiter.TryAdmit("hub-1"));
    }

    [Fact]
    public void Many_hubs_that_registered_long_ago_are_forgotten_and_still_limited_correctly()
    {
        var limiter = new NewDeviceLimiter(1, _time);
        for (int i = 0; i < 2000; i++)
        {
            limiter.TryAdmit($"hub-{i}").ShouldBeTrue();
        }

        _time.Advance(TimeSpan.FromHours(1));
        limiter.TryAdmit("hub-0").ShouldBeTrue();
        limiter.TryAdmit("hub-0").ShouldBeFalse();
        limiter.TryAdmit("hub-1999").ShouldBeTrue();
    }

    [Theory]
    [InlineData(-1, false)]
    [InlineData(0, true)]
    [InlineData(1000, true)]
    [InlineData(1_000_001, false)]
    public void The_setting_is_checked_at_start(int value, bool valid)
    {
        var result = new IngestionOptionsValidator().Validate(null, new IngestionOptions { MaxNewDevicesPerHubPerHour = value });

        result.Succeeded.ShouldBe(valid);
        if (!valid)
        {
            result.FailureMessage!.ShouldContain("Ingestion:MaxNewDevicesPerHubPerHour");
        }
    }
}

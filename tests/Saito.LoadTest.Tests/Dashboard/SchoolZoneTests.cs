using Saito.LoadTest.Dashboard;

namespace Saito.LoadTest.Tests.Dashboard;

/// <summary>
/// The dashboard benchmark runs its class in a school time zone where it is about noon, so a run started near midnight
/// UTC still finds a session that lasts through it (a class slot cannot cross midnight).
/// </summary>
public sealed class SchoolZoneTests
{
    [Fact]
    public void At_every_hour_of_the_day_the_school_zone_exists_and_it_is_noon_there()
    {
        var day = new DateTime(2026, 11, 27, 0, 30, 0, DateTimeKind.Utc);
        for (int hour = 0; hour < 24; hour++)
        {
            var utc = day.AddHours(hour);
            string zone = SaitoApi.EtcZone(SaitoApi.NoonOffsetHours(utc));
            var local = TimeZoneInfo.ConvertTimeFromUtc(utc, TimeZoneInfo.FindSystemTimeZoneById(zone));
            local.Hour.ShouldBe(12, $"{utc:HH:mm} UTC in {zone}");
            local.Minute.ShouldBe(30);
        }
    }
}

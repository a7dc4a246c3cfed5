using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>The counts behind the connections' summary line (event 1029), without a socket or a clock.</summary>
public sealed class ConnectionSummaryTests
{
    private readonly ConnectionSummary _summary = new();

    [Fact]
    public void Nothing_is_reported_until_something_changes_and_then_only_what_changed_since_the_last_report()
    {
        _summary.Take().ShouldBeNull("nothing happened yet");

        _summary.Connected();
        _summary.Connected();
        _summary.Connected();
        _summary.Disconnected(takenOver: false);
        _summary.Refused("BadUserNameOrPassword");
        _summary.Refused("ServerBusy");
        _summary.Refused("BadUserNameOrPassword");
        var first = _summary.Take().ShouldNotBeNull();
        (first.Connected, first.Disconnected, first.TakenOver, first.RefusedTotal, first.Open).ShouldBe((3L, 1L, 0L, 3L, 2L));
        first.RefusedByReason.ShouldBe("BadUserNameOrPassword 2, ServerBusy 1");

        _summary.Take().ShouldBeNull("the two open connections are no change");

        _summary.Disconnected(takenOver: true);
        var second = _summary.Take().ShouldNotBeNull();
        (second.Connected, second.Disconnected, second.TakenOver, second.RefusedTotal, second.Open).ShouldBe((0L, 1L, 1L, 0L, 1L));
        second.RefusedByReason.ShouldBe("none");

        _summary.Refused("ServerBusy");
        var third = _summary.Take().ShouldNotBeNull("a refusal alone is a change");
        (third.RefusedByReason, third.Open).ShouldBe(("ServerBusy 1", 1L));
    }
}

using Saito.Ingestion.Pipeline;

namespace Saito.Ingestion.Tests.Pipeline;

public sealed class CapacityGateTests
{
    [Fact]
    public async Task Amounts_that_fit_pass_at_once_and_the_next_waits_until_enough_is_released()
    {
        var gate = new CapacityGate(10);
        await gate.AcquireAsync(6, CancellationToken.None);
        await gate.AcquireAsync(4, CancellationToken.None);
        gate.Used.ShouldBe(10);

        var waiting = gate.AcquireAsync(3, CancellationToken.None).AsTask();
        waiting.IsCompleted.ShouldBeFalse();
        gate.Release(2);
        waiting.IsCompleted.ShouldBeFalse("2 free is not enough for 3");
        gate.Release(4);
        await waiting.WaitAsync(TimeSpan.FromSeconds(5), TestContext.Current.CancellationToken);
        gate.Used.ShouldBe(7);
    }

    [Fact]
    public async Task Waiters_are_served_first_come_first_served()
    {
        var gate = new CapacityGate(4);
        await gate.AcquireAsync(4, CancellationToken.None);
        var big = gate.AcquireAsync(3, CancellationToken.None).AsTask();
        var small = gate.AcquireAsync(1, CancellationToken.None).AsTask();
        gate.Release(1);
        small.IsCompleted.ShouldBeFalse("a later small request does not overtake an earlier big one");
        gate.Release(2);
        await big.WaitAsync(TimeSpan.FromSeconds(5), TestContext.Current.CancellationToken);
        small.IsCompleted.ShouldBeFalse("1 held + 3 granted fill the gate");
        gate.Release(3);
        await small.WaitAsync(TimeSpan.FromSeconds(5), TestContext.Current.CancellationToken);
        gate.Used.ShouldBe(2);
    }

    [Fact]
    public async Task A_request_larger_than_the_capacity_passes_when_the_gate_is_empty()
    {
        var gate = new CapacityGate(5);
        await gate.AcquireAsync(50, CancellationToken.None);
        gate.Used.ShouldBe(50);
        var next = gate.AcquireAsync(1, CancellationToken.None).AsTask();
        next.IsCompleted.ShouldBeFalse();
        gate.Release(50);
        await next.WaitAsync(TimeSpan.FromSeconds(5), TestContext.Current.CancellationToken);
    }

    [Fact]
    public async Task A_cancelled_waiter_gives_way_to_the_next()
    {
        var gate = new CapacityGate(2);
        await gate.AcquireAsync(2, CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        var cancelled = gate.AcquireAsync(2, cancel.Token).AsTask();
        var next = gate.AcquireAsync(1, CancellationToken.None).AsTask();
        await cancel.CancelAsync();
        await Should.ThrowAsync<OperationCanceledException>(cancelled);
        gate.Release(1);
        await next.WaitAsync(TimeSpan.FromSeconds(5), TestContext.Current.CancellationToken);
        gate.Used.ShouldBe(2);
    }

    [Fact]
    public void Releasing_more_than_was_acquired_is_a_bug_and_says_so()
    {
        var gate = new CapacityGate(3);
        Should.Throw<InvalidOperationException>(() => gate.Release(1));
    }
}

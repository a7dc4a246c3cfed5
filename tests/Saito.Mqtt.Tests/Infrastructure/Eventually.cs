namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>Waits for a condition on the broker's state with a deadline (never a fixed sleep).</summary>
public static class Eventually
{
    public static async Task TrueAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        var limit = timeout ?? TimeSpan.FromSeconds(10);
        var deadline = DateTime.UtcNow + limit;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"not within {limit.TotalSeconds:F0} s: {what}");
            }

            await Task.Delay(20, TestContext.Current.CancellationToken);
        }
    }
}

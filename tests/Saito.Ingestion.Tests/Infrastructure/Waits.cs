namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>Waiting for a condition with a deadline, never for a fixed time.</summary>
public static class Waits
{
    public static async Task UntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        var limit = timeout ?? TimeSpan.FromSeconds(30);
        var deadline = DateTime.UtcNow + limit;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new ShouldAssertException($"Not within {limit.TotalSeconds:F0} s: {what}");
            }

            await Task.Delay(50, TestContext.Current.CancellationToken);
        }
    }
}

namespace Saito.Testing;

/// <summary>Waits for a condition with a deadline, never for a fixed time.</summary>
public static class Eventually
{
    /// <summary>Returns once <paramref name="condition"/> holds; fails naming <paramref name="what"/> when it has not within <paramref name="timeout"/> (30 s).</summary>
    public static async Task TrueAsync(Func<bool> condition, string what, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var limit = timeout ?? TimeSpan.FromSeconds(30);
        var deadline = DateTime.UtcNow + limit;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new ShouldAssertException($"Not within {limit.TotalSeconds:F0} s: {what}");
            }

            await Task.Delay(20, TestContext.Current.CancellationToken);
        }
    }
}

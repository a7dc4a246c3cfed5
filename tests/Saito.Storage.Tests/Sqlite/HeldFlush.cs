namespace Saito.Storage.Tests.Sqlite;

/// <summary>
/// Runs before each flush of the SQLite writer's log (<c>SqliteWalSync</c>'s beforeFlush): counts the rounds that
/// started and holds each until the test releases it, so a test can see who waits for which flush. The real
/// <c>fdatasync</c> runs after it.
/// </summary>
internal sealed class HeldFlush : IDisposable
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);
    private readonly SemaphoreSlim _release = new(0);
    private readonly SemaphoreSlim _started = new(0);
    private int _count;

    public int Started => Volatile.Read(ref _count);

    public void Run()
    {
        Interlocked.Increment(ref _count);
        _started.Release();
        if (!_release.Wait(Deadline))
        {
            throw new TimeoutException("the test never released the flush");
        }
    }

    public async Task WaitUntilStartedAsync(int count)
    {
        while (Started < count)
        {
            (await _started.WaitAsync(Deadline, TestContext.Current.CancellationToken)).ShouldBeTrue($"flush {count} never started");
        }
    }

    public void Release() => _release.Release();

    public void Dispose()
    {
        _release.Dispose();
        _started.Dispose();
    }
}

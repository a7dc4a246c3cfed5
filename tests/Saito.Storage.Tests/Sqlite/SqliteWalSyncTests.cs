using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Sqlite;

namespace Saito.Storage.Tests.Sqlite;

/// <summary>
/// The rounds that flush the SQLite writer's log beside it: a commit is never reported on disk by a flush that started
/// before it, commits made during one flush share the next, and a failed flush is final. The flush is held open by the
/// test (a gate around a counter) to see who waits for what; the real flush of a real file is tested at the end and
/// through <see cref="SqliteReadingStore"/>.
/// </summary>
public sealed class SqliteWalSyncTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_commit_made_while_a_flush_runs_waits_for_the_next_flush()
    {
        using var flush = new HeldFlush();
        using var sync = new SqliteWalSync(flush.Run);

        var first = sync.AfterCommit();
        await flush.WaitUntilStartedAsync(1);
        var second = sync.AfterCommit(); // committed after flush 1 began: flush 1 does not cover it
        flush.Release();

        await first.WaitAsync(Deadline, TestContext.Current.CancellationToken);
        await flush.WaitUntilStartedAsync(2);
        second.IsCompleted.ShouldBeFalse("flush 2 is still running, and flush 1 started before this commit");
        flush.Release();
        await second.WaitAsync(Deadline, TestContext.Current.CancellationToken);
        sync.Rounds.ShouldBe(2);
    }

    [Fact]
    public async Task Commits_made_during_one_flush_share_the_next()
    {
        using var flush = new HeldFlush();
        using var sync = new SqliteWalSync(flush.Run);

        var first = sync.AfterCommit();
        await flush.WaitUntilStartedAsync(1);
        var during = Enumerable.Range(0, 5).Select(_ => sync.AfterCommit()).ToArray();
        flush.Release();
        await flush.WaitUntilStartedAsync(2);
        flush.Release();

        await Task.WhenAll(during.Append(first)).WaitAsync(Deadline, TestContext.Current.CancellationToken);
        flush.Started.ShouldBe(2, "one flush for the first commit, one for the five made while it ran");
    }

    [Fact]
    public async Task A_failed_flush_fails_its_commits_and_every_later_one()
    {
        int calls = 0;
        using var sync = new SqliteWalSync(() =>
        {
            if (Interlocked.Increment(ref calls) == 1)
            {
                throw new IOException("EIO from the disk");
            }
        });

        var failed = await Should.ThrowAsync<IOException>(() => sync.AfterCommit().WaitAsync(Deadline, TestContext.Current.CancellationToken));
        failed.Message.ShouldContain("EIO from the disk");
        failed.Message.ShouldContain("acknowledges nothing more until it is restarted");

        // The next flush would succeed, but a flush after a failed one proves nothing (the kernel may have dropped the pages).
        var later = await Should.ThrowAsync<IOException>(() => sync.AfterCommit().WaitAsync(Deadline, TestContext.Current.CancellationToken));
        later.Message.ShouldBe(failed.Message);
        Volatile.Read(ref calls).ShouldBe(1);
        sync.Rounds.ShouldBe(0);
    }

    [Fact]
    public async Task Disposing_runs_the_flush_already_asked_for_and_refuses_new_commits()
    {
        var flush = new HeldFlush();
        var sync = new SqliteWalSync(flush.Run);
        var asked = sync.AfterCommit();
        await flush.WaitUntilStartedAsync(1);

        var disposing = Task.Run(sync.Dispose, TestContext.Current.CancellationToken);
        flush.Release();
        await disposing.WaitAsync(Deadline, TestContext.Current.CancellationToken);

        await asked.WaitAsync(Deadline, TestContext.Current.CancellationToken);
        Should.Throw<ObjectDisposedException>(() => sync.AfterCommit());
        flush.Dispose();
    }

    [Fact]
    public async Task The_real_flush_flushes_the_file_and_treats_a_missing_log_as_nothing_to_flush()
    {
        string folder = Path.Combine(Path.GetTempPath(), "saito-wal-sync-tests", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        try
        {
            string wal = Path.Combine(folder, "saito-hot.db-wal");
            using var sync = new SqliteWalSync(wal, NullLogger.Instance);

            await sync.AfterCommit().WaitAsync(Deadline, TestContext.Current.CancellationToken); // no log yet
            await File.WriteAllBytesAsync(wal, new byte[8192], TestContext.Current.CancellationToken);
            await sync.AfterCommit().WaitAsync(Deadline, TestContext.Current.CancellationToken);

            sync.Rounds.ShouldBe(2);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>A flush that counts its starts and waits for the test to release it.</summary>
    private sealed class HeldFlush : IDisposable
    {
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
}

using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Sqlite;

namespace Saito.Storage.Tests.Sqlite;

/// <summary>
/// The rounds that flush the SQLite writer's log beside it, on a real file with the real <c>fdatasync</c>: a commit is
/// never reported on disk by a flush that started before it, commits made during one flush share the next, a failed
/// flush is final, and disposing runs what was asked for. A <see cref="HeldFlush"/> holds each round open before its
/// flush to see who waits for what.
/// </summary>
public sealed class SqliteWalSyncTests : IDisposable
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "saito-wal-sync-tests", Guid.NewGuid().ToString("N"));
    private readonly HeldFlush _flush = new();

    public SqliteWalSyncTests() => Directory.CreateDirectory(_folder);

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_commit_made_while_a_flush_runs_waits_for_the_next_flush()
    {
        using var sync = Started(_flush.Run);

        var first = sync.AfterCommit();
        await _flush.WaitUntilStartedAsync(1);
        var second = sync.AfterCommit(); // committed after flush 1 began: flush 1 does not cover it
        _flush.Release();

        await first.WaitAsync(Deadline, Ct);
        await _flush.WaitUntilStartedAsync(2);
        second.IsCompleted.ShouldBeFalse("flush 2 is still held, and flush 1 started before this commit");
        _flush.Release();
        await second.WaitAsync(Deadline, Ct);
        sync.Rounds.ShouldBe(2);
    }

    [Fact]
    public async Task Commits_made_during_one_flush_share_the_next()
    {
        using var sync = Started(_flush.Run);

        var first = sync.AfterCommit();
        await _flush.WaitUntilStartedAsync(1);
        var during = Enumerable.Range(0, 5).Select(_ => sync.AfterCommit()).ToArray();
        _flush.Release();
        await _flush.WaitUntilStartedAsync(2);
        _flush.Release();

        await Task.WhenAll(during.Append(first)).WaitAsync(Deadline, Ct);
        _flush.Started.ShouldBe(2, "one flush for the first commit, one for the five made while it ran");
        sync.Rounds.ShouldBe(2);
    }

    [Fact]
    public async Task A_failed_flush_fails_its_commits_and_every_later_one()
    {
        int calls = 0;
        using var sync = Started(() =>
        {
            if (Interlocked.Increment(ref calls) == 1)
            {
                throw new IOException("EIO from the disk");
            }
        });

        var failed = await Should.ThrowAsync<IOException>(() => sync.AfterCommit().WaitAsync(Deadline, Ct));
        failed.Message.ShouldContain("EIO from the disk");
        failed.Message.ShouldContain("acknowledges nothing more until it is restarted");

        // The next flush would succeed, but a flush after a failed one proves nothing (the kernel may have dropped the pages).
        var later = await Should.ThrowAsync<IOException>(() => sync.AfterCommit().WaitAsync(Deadline, Ct));
        later.Message.ShouldBe(failed.Message);
        Should.Throw<IOException>(sync.ThrowIfFailed).Message.ShouldBe(failed.Message);
        Volatile.Read(ref calls).ShouldBe(1);
        sync.Rounds.ShouldBe(0);
    }

    [Fact]
    public async Task Disposing_runs_the_flushes_already_asked_for_and_refuses_new_commits()
    {
        var sync = Started(_flush.Run);
        var running = sync.AfterCommit();
        await _flush.WaitUntilStartedAsync(1);
        var waiting = sync.AfterCommit(); // asked for, not started when Dispose begins

        var disposing = Task.Run(sync.Dispose, Ct);
        _flush.Release();
        await _flush.WaitUntilStartedAsync(2);
        _flush.Release();

        await Task.WhenAll(running, waiting, disposing).WaitAsync(Deadline, Ct);
        sync.Rounds.ShouldBe(2);
        Should.Throw<ObjectDisposedException>(() => sync.AfterCommit());
    }

    [Fact]
    public async Task A_new_log_is_flushed_from_the_next_round_and_a_missing_one_is_refused()
    {
        using var sync = Started(beforeFlush: null);
        string second = Path.Combine(_folder, "second.db-wal");
        await File.WriteAllBytesAsync(second, new byte[4096], Ct);

        sync.UseLog(second);
        await sync.AfterCommit().WaitAsync(Deadline, Ct);

        Should.Throw<FileNotFoundException>(() => sync.UseLog(Path.Combine(_folder, "missing.db-wal")));
        await sync.AfterCommit().WaitAsync(Deadline, Ct); // still flushing second.db-wal
        sync.Rounds.ShouldBe(2);
    }

    /// <summary>A sync on a real 8 KiB file in this test's folder.</summary>
    private SqliteWalSync Started(Action? beforeFlush)
    {
        string wal = Path.Combine(_folder, "saito-hot.db-wal");
        File.WriteAllBytes(wal, new byte[8192]);
        var sync = new SqliteWalSync(NullLogger.Instance, beforeFlush);
        sync.UseLog(wal);
        return sync;
    }

    public void Dispose()
    {
        _flush.Dispose();
        Directory.Delete(_folder, recursive: true);
    }
}

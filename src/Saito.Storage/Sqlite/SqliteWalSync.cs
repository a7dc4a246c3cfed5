using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;
using Saito.Storage.Archive;

namespace Saito.Storage.Sqlite;

/// <summary>
/// Makes the writer's commits durable beside SQLite's write lock instead of inside it (<c>Storage:Sqlite:Synchronous</c>
/// <c>full</c>, WAL journaling, Linux). The writer connection runs with <c>synchronous = NORMAL</c>: a commit writes its
/// frames to the <c>-wal</c> file and returns without waiting for the disk. The writer then asks for a flush
/// (<see cref="AfterCommit"/>) and is not told its batch is stored until a round has flushed the <c>-wal</c> file with
/// <c>fdatasync</c>, a round that started after its commit returned. One thread runs the rounds, one after the other;
/// every commit made while a round runs waits for the next round, so one flush serves them all (group commit), and the
/// next batch is inserted while the disk works.
/// <para>
/// Why this is as durable as SQLite's own <c>synchronous = FULL</c> (which flushes the log inside every commit): in WAL
/// mode a commit changes nothing but the <c>-wal</c> file; with NORMAL, SQLite still flushes the log before every
/// checkpoint, the database file after it, and the log's header whenever the log starts over, so NORMAL only leaves out
/// the flush at commit, and a round puts it back before anyone is told.
/// </para>
/// <para>
/// The log is opened once per writer connection, before its first commit (<see cref="UseLog"/>), by the name SQLite gives
/// it, and kept open: Linux reports a failed write-back to every descriptor that was open when it happened, but to a
/// descriptor opened later only if no other descriptor (SQLite's own, at a checkpoint) has reported it first. SQLite
/// takes no locks on the <c>-wal</c> file, so closing this descriptor releases none of SQLite's. While the writer
/// connection is open the file stays the same: SQLite deletes the log only when the last connection closes.
/// </para>
/// <para>
/// A failed flush is final: after a failed <c>fsync</c>, Linux may drop the pages it could not write and report success
/// the next time, so a retry would not prove anything. Every round after a failure fails with the same error, and the
/// store commits nothing more (<see cref="ThrowIfFailed"/>); nothing more is acknowledged until Saito is restarted
/// (SQLite then recovers from what is on disk, and hubs send again what was never acknowledged).
/// </para>
/// </summary>
internal sealed class SqliteWalSync : IDisposable
{
    private static readonly TimeSpan StopWait = TimeSpan.FromSeconds(10);

    private readonly ILogger _logger;
    private readonly Action? _beforeFlush;
    private readonly object _lock = new(); // Monitor.Wait/Pulse: an object's monitor, not System.Threading.Lock
    private readonly Thread _thread;
    private TaskCompletionSource _next = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _requested;
    private bool _stopping;
    private IOException? _failure;
    private SafeFileHandle? _log;
    private string _logFile = "";
    private long _rounds;

    /// <param name="logger">Where a failed flush is reported (critical).</param>
    /// <param name="beforeFlush">Runs in each round before the flush: tests hold a round open here, or fail it.</param>
    public SqliteWalSync(ILogger logger, Action? beforeFlush = null)
    {
        _logger = logger;
        _beforeFlush = beforeFlush;
        _thread = new Thread(Run) { IsBackground = true, Name = "saito-sqlite-wal-sync" };
        _thread.Start();
    }

    /// <summary>Rounds completed (successful flushes).</summary>
    public long Rounds => Interlocked.Read(ref _rounds);

    /// <summary>
    /// The log of a writer connection just opened, before its first commit: opened here and flushed from now on. A round
    /// already flushing the previous one finishes with it (the descriptor closes after).
    /// </summary>
    /// <exception cref="FileNotFoundException">The log is not there: SQLite did not open the file in WAL mode.</exception>
    public void UseLog(string walFile)
    {
        var handle = File.OpenHandle(walFile, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        SafeFileHandle? previous;
        lock (_lock)
        {
            if (_stopping)
            {
                handle.Dispose();
                throw new ObjectDisposedException(nameof(SqliteWalSync));
            }

            previous = _log;
            _log = handle;
            _logFile = walFile;
        }

        previous?.Dispose();
    }

    /// <summary>Throws the flush's error if a flush has failed: nothing more may be committed through this writer.</summary>
    public void ThrowIfFailed()
    {
        lock (_lock)
        {
            if (_failure is not null)
            {
                throw Failed(_failure);
            }
        }
    }

    /// <summary>
    /// Call right after a commit returned, before the next write can begin: completes once a round that started after
    /// this call has flushed the log; faults with the flush's <see cref="IOException"/> if it failed (now or before).
    /// </summary>
    public Task AfterCommit()
    {
        lock (_lock)
        {
            if (_failure is not null)
            {
                return Task.FromException(Failed(_failure));
            }

            ObjectDisposedException.ThrowIf(_stopping, this);
            _requested = true;
            Monitor.Pulse(_lock);
#pragma warning disable VSTHRD003 // The round is this object's own, completed by its thread; a server has no context to deadlock.
            return _next.Task;
#pragma warning restore VSTHRD003
        }
    }

    private void Run()
    {
        while (true)
        {
            TaskCompletionSource round;
            SafeFileHandle? log;
            string logFile;
            bool referenced = false;
            lock (_lock)
            {
                while (!_requested && !_stopping)
                {
                    Monitor.Wait(_lock);
                }

                if (!_requested)
                {
                    return; // stopping, and nobody waits
                }

                round = _next;
                _next = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                _requested = false;
                if (_failure is not null)
                {
                    round.SetException(Failed(_failure));
                    continue;
                }

                // Referenced under the lock, so that UseLog's Dispose of it only closes the descriptor after this round.
                log = _log;
                logFile = _logFile;
                log?.DangerousAddRef(ref referenced);
            }

            try
            {
                if (log is null)
                {
                    throw new InvalidOperationException("A commit asked for a flush before the writer's log was opened.");
                }

                _beforeFlush?.Invoke();
                if (NativeFiles.FileDataSync(log) != 0)
                {
                    int errno = Marshal.GetLastPInvokeError();
                    throw new IOException($"fdatasync failed with errno {errno} ({Marshal.GetPInvokeErrorMessage(errno)})");
                }

                Interlocked.Increment(ref _rounds);
                round.SetResult();
            }
            catch (Exception exception)
            {
                var failure = new IOException(
                    $"Flushing the SQLite log {logFile} to disk failed ({exception.Message}); readings committed since the last flush may " +
                    "not be on disk, so Saito commits and acknowledges nothing more until it is restarted", exception);
                lock (_lock)
                {
                    _failure = failure;
                }

                SqliteLog.WalFlushFailed(_logger, exception, logFile);
                round.SetException(failure);
            }
            finally
            {
                if (referenced)
                {
                    log!.DangerousRelease();
                }
            }
        }
    }

    private static IOException Failed(IOException failure) => new(failure.Message, failure);

    /// <summary>Lets the rounds already asked for run (waiting up to 10 s for a disk that hangs), then closes the log.</summary>
    public void Dispose()
    {
        SafeFileHandle? log;
        lock (_lock)
        {
            if (_stopping)
            {
                return;
            }

            _stopping = true;
            Monitor.Pulse(_lock);
        }

        _thread.Join(StopWait);
        lock (_lock)
        {
            log = _log;
            _log = null;
        }

        log?.Dispose(); // a round still in fdatasync holds a reference: the descriptor closes when it returns
    }
}

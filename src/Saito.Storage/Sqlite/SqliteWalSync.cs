using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;

namespace Saito.Storage.Sqlite;

/// <summary>
/// Makes the writer's commits durable beside SQLite's write lock instead of inside it (<c>Storage:Sqlite:Synchronous</c>
/// <c>full</c>, WAL journaling). The writer connection runs with <c>synchronous = NORMAL</c>: a commit writes its frames to
/// the <c>-wal</c> file and returns without waiting for the disk. The writer then asks for a sync (<see cref="AfterCommit"/>)
/// and is not told its batch is stored until a round has flushed the <c>-wal</c> file to disk with <c>fdatasync</c>,
/// a round that started after its commit returned. One thread runs the rounds, one after the other; every commit made
/// while a round runs waits for the next round, so one flush serves them all (group commit), and the next batch is
/// inserted while the disk works.
/// <para>
/// Why this is as durable as SQLite's own <c>synchronous = FULL</c> (which flushes the log inside every commit): in WAL
/// mode a commit changes nothing but the <c>-wal</c> file; with NORMAL, SQLite still flushes the log before every
/// checkpoint, the database file after it, and the log's header whenever the log starts over, so NORMAL only leaves out
/// the flush at commit, and a round puts it back before anyone is told. A round opens the <c>-wal</c> file by name, so
/// that it always flushes the log in use; when there is none, the last connection closed and SQLite checkpointed the
/// log into the database file and flushed it, so there is nothing left to flush.
/// </para>
/// <para>
/// A failed flush is final: after a failed <c>fsync</c>, Linux may drop the pages it could not write and report success
/// the next time, so a retry would not prove anything. Every round after a failure fails with the same error; nothing
/// more is acknowledged until Saito is restarted (SQLite then recovers from what is on disk, and hubs send again what
/// was never acknowledged).
/// </para>
/// </summary>
internal sealed class SqliteWalSync : IDisposable
{
    private readonly Action _flush;
    private readonly ILogger? _logger;
    private readonly object _lock = new(); // Monitor.Wait/Pulse: an object's monitor, not System.Threading.Lock
    private readonly Thread _thread;
    private TaskCompletionSource _next = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _requested;
    private bool _stopping;
    private IOException? _failure;
    private long _rounds;

    /// <summary>Flushes <paramref name="walFile"/> (the database file's name followed by <c>-wal</c>).</summary>
    public SqliteWalSync(string walFile, ILogger logger)
        : this(() => FlushFile(walFile))
    {
        WalFile = walFile;
        _logger = logger;
    }

    /// <summary>With the flush given: for tests of the rounds, which hold a flush open to see who waits for what.</summary>
    internal SqliteWalSync(Action flush)
    {
        _flush = flush;
        _thread = new Thread(Run) { IsBackground = true, Name = "saito-sqlite-wal-sync" };
        _thread.Start();
    }

    public string? WalFile { get; }

    /// <summary>Rounds completed (successful flushes).</summary>
    public long Rounds => Interlocked.Read(ref _rounds);

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
            }

            try
            {
                _flush();
                Interlocked.Increment(ref _rounds);
                round.SetResult();
            }
            catch (Exception exception)
            {
                var failure = new IOException(
                    $"Flushing the SQLite log {WalFile ?? "file"} to disk failed ({exception.Message}); readings committed since the last flush may " +
                    "not be on disk, so Saito acknowledges nothing more until it is restarted", exception);
                lock (_lock)
                {
                    _failure = failure;
                }

                if (_logger is not null)
                {
                    SqliteLog.WalFlushFailed(_logger, exception, WalFile ?? "");
                }

                round.SetException(failure);
            }
        }
    }

    private static IOException Failed(IOException failure) => new(failure.Message, failure);

    /// <summary>Opens the log by name, <c>fdatasync</c> (Linux) or FlushFileBuffers (elsewhere), closes it.</summary>
    private static void FlushFile(string walFile)
    {
        SafeFileHandle handle;
        try
        {
            // Never the database file or -shm: closing a descriptor drops the process's POSIX locks on that file,
            // which SQLite holds on those two. The -wal file is not locked.
            handle = File.OpenHandle(walFile, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        }
        catch (FileNotFoundException)
        {
            return; // no log: the last connection checkpointed it into the database file and flushed that (see above)
        }

        using (handle)
        {
            if (OperatingSystem.IsLinux())
            {
                if (FileDataSync(handle) != 0)
                {
                    int errno = Marshal.GetLastPInvokeError();
                    throw new IOException($"fdatasync failed with errno {errno} ({Marshal.GetPInvokeErrorMessage(errno)})");
                }
            }
            else
            {
                using var stream = new FileStream(handle, FileAccess.ReadWrite, bufferSize: 0);
                stream.Flush(flushToDisk: true);
            }
        }
    }

    // The SafeHandle parameter keeps the descriptor open for the length of the call.
    [DllImport("libc", EntryPoint = "fdatasync", SetLastError = true)]
    private static extern int FileDataSync(SafeFileHandle handle);

    /// <summary>Lets the rounds already asked for run, then stops the thread.</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            if (_stopping)
            {
                return;
            }

            _stopping = true;
            Monitor.Pulse(_lock);
        }

        _thread.Join();
    }
}

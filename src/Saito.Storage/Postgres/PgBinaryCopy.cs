using System.Buffers;
using System.Buffers.Binary;
using Npgsql;

namespace Saito.Storage.Postgres;

/// <summary>
/// Rows for <c>COPY ... FROM STDIN (FORMAT BINARY)</c>, encoded here into a pooled buffer and sent through Npgsql's raw
/// copy stream in 64 KiB writes. Npgsql's <see cref="NpgsqlBinaryImporter"/> resolves a converter and binds a parameter
/// for every value, which was a tenth of Saito's CPU with 320 sensors sending one reading per message (issue 15); the
/// format itself is fixed and small (PostgreSQL docs, "COPY: Binary Format"): a header, per row a 16-bit field count
/// and per field a 32-bit length (-1 for NULL) and the value in network byte order, then a -1 trailer.
/// </summary>
internal sealed class PgBinaryCopy : IAsyncDisposable
{
    private const int FlushAt = 60 * 1024;

    /// <summary>PostgreSQL timestamps count microseconds from 2000-01-01 00:00 UTC.</summary>
    private static readonly long s_epochTicks = new DateTime(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc).Ticks;

    private static ReadOnlySpan<byte> Header => [(byte)'P', (byte)'G', (byte)'C', (byte)'O', (byte)'P', (byte)'Y', (byte)'\n', 0xFF, (byte)'\r', (byte)'\n', 0, 0, 0, 0, 0, 0, 0, 0, 0];

    private readonly NpgsqlRawCopyStream _stream;
    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
    private int _at;
    private bool _finished;

    private PgBinaryCopy(NpgsqlRawCopyStream stream)
    {
        _stream = stream;
        Header.CopyTo(_buffer);
        _at = Header.Length;
    }

    /// <summary>Starts the COPY; <paramref name="timeout"/> bounds each write and the server's answer (null: Npgsql's default).</summary>
    public static async Task<PgBinaryCopy> BeginAsync(NpgsqlConnection connection, string copySql, TimeSpan? timeout, CancellationToken cancellationToken)
    {
        var stream = await connection.BeginRawBinaryCopyAsync(copySql, cancellationToken);
        if (timeout is { } bound)
        {
            stream.WriteTimeout = stream.ReadTimeout = checked((int)bound.TotalMilliseconds);
        }

        return new PgBinaryCopy(stream);
    }

    /// <summary>Starts a row of <paramref name="fields"/> fields; sends what is buffered first when the buffer is nearly full.</summary>
    public ValueTask StartRowAsync(short fields, CancellationToken cancellationToken)
    {
        if (_at < FlushAt)
        {
            Write(fields);
            return ValueTask.CompletedTask;
        }

        return FlushThenStartAsync(fields, cancellationToken);
    }

    private async ValueTask FlushThenStartAsync(short fields, CancellationToken cancellationToken)
    {
        await SendAsync(cancellationToken);
        Write(fields);
    }

    private void Write(short fields)
    {
        BinaryPrimitives.WriteInt16BigEndian(_buffer.AsSpan(_at), fields);
        _at += 2;
    }

    // A row is at most a few hundred bytes; StartRowAsync leaves 4 KiB free at least.
    public void Int32(int value)
    {
        var span = _buffer.AsSpan(_at);
        BinaryPrimitives.WriteInt32BigEndian(span, 4);
        BinaryPrimitives.WriteInt32BigEndian(span[4..], value);
        _at += 8;
    }

    public void Float8(double value)
    {
        var span = _buffer.AsSpan(_at);
        BinaryPrimitives.WriteInt32BigEndian(span, 8);
        BinaryPrimitives.WriteDoubleBigEndian(span[4..], value);
        _at += 12;
    }

    public void Null()
    {
        BinaryPrimitives.WriteInt32BigEndian(_buffer.AsSpan(_at), -1);
        _at += 4;
    }

    /// <summary>A <c>timestamptz</c>: UTC only (what Npgsql accepts for it too), truncated to microseconds as Npgsql does.</summary>
    public void TimestampTz(DateTime value)
    {
        if (value.Kind != DateTimeKind.Utc)
        {
            throw new ArgumentException($"A timestamp with time zone must be UTC (Kind={value.Kind}): {value:O}", nameof(value));
        }

        var span = _buffer.AsSpan(_at);
        BinaryPrimitives.WriteInt32BigEndian(span, 8);
        BinaryPrimitives.WriteInt64BigEndian(span[4..], (value.Ticks - s_epochTicks) / 10);
        _at += 12;
    }

    /// <summary>A <c>uuid</c>: its 16 bytes in RFC 4122 order.</summary>
    public void Uuid(Guid value)
    {
        var span = _buffer.AsSpan(_at);
        BinaryPrimitives.WriteInt32BigEndian(span, 16);
        value.TryWriteBytes(span[4..], bigEndian: true, out _);
        _at += 20;
    }

    /// <summary>Sends the trailer and ends the COPY; the rows are in once this returns (inside the caller's transaction).</summary>
    public async Task CompleteAsync(CancellationToken cancellationToken)
    {
        if (_at > _buffer.Length - 2)
        {
            await SendAsync(cancellationToken);
        }

        BinaryPrimitives.WriteInt16BigEndian(_buffer.AsSpan(_at), -1);
        _at += 2;
        await SendAsync(cancellationToken);
        _finished = true;
        await _stream.DisposeAsync();
    }

    /// <summary>
    /// Sends what is buffered. A cancellation seen before the write keeps the connection: the COPY is then cancelled
    /// on it by <see cref="DisposeAsync"/>. One that comes while Npgsql is writing breaks the connection, and Npgsql
    /// reports it as an <see cref="NpgsqlException"/> "Exception while writing to stream"; the caller asked for the
    /// cancellation, so it gets an <see cref="OperationCanceledException"/> like every other cancelled write.
    /// </summary>
    private async ValueTask SendAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        try
        {
            await _stream.WriteAsync(_buffer.AsMemory(0, _at), cancellationToken);
        }
        catch (NpgsqlException e) when (cancellationToken.IsCancellationRequested)
        {
            throw new OperationCanceledException("The COPY was cancelled while its rows were being sent; the connection was closed.", e, cancellationToken);
        }

        _at = 0;
    }

    /// <summary>
    /// Without <see cref="CompleteAsync"/> (an error part way), the COPY is cancelled: no row of it stays. The caller
    /// is already failing with its own exception, which must be the one it sees: a write cancelled by its token makes
    /// Npgsql end the COPY itself (cancelling again throws <see cref="ObjectDisposedException"/>), and a broken
    /// connection fails the cancel too; in both cases Npgsql has ended the COPY or broken the connector, so no
    /// connection goes back to the pool part way through a COPY.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_finished)
            {
                try
                {
                    await _stream.CancelAsync();
                    await _stream.DisposeAsync();
                }
                catch (Exception e) when (e is ObjectDisposedException or NpgsqlException or IOException or OperationCanceledException)
                {
                    // Ended already, or the connection is gone: see above.
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
        }
    }
}

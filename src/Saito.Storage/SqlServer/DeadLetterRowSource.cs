using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Dead letters as SqlBulkCopy's row source, columns <see cref="SqlServerSchema.DeadLetterColumns"/>:
/// received_at, topic, client_id (NULL when unknown), reason, detail, payload, payload_bytes (NULL unless the
/// payload text is not the exact bytes). For the varbinary(max) payload_bytes with EnableStreaming, SqlBulkCopy asks
/// <see cref="GetStream"/> (whose base implementation would copy through <see cref="GetBytes"/>).
/// </summary>
internal sealed class DeadLetterRowSource : RowListReader
{
    private const int ReceivedAt = 0;
    private const int ClientId = 2;
    private const int PayloadBytes = 6;

    private readonly IReadOnlyList<DeadLetter> _letters;
    private DeadLetter? _current;

    public DeadLetterRowSource(IReadOnlyList<DeadLetter> letters)
        : base(SqlServerSchema.DeadLetterColumns)
    {
        ArgumentNullException.ThrowIfNull(letters);
        _letters = letters;
    }

    protected override int RowCount => _letters.Count;

    public override Type GetFieldType(int ordinal)
    {
        CheckOrdinal(ordinal);
        return ordinal switch
        {
            ReceivedAt => typeof(DateTime),
            PayloadBytes => typeof(byte[]),
            _ => typeof(string),
        };
    }

    public override string GetDataTypeName(int ordinal)
    {
        CheckOrdinal(ordinal);
        return ordinal switch
        {
            ReceivedAt => "datetime2",
            PayloadBytes => "varbinary",
            _ => "nvarchar",
        };
    }

    public override bool IsDBNull(int ordinal)
    {
        CheckRow();
        CheckOrdinal(ordinal);
        return (ordinal == ClientId && _current!.ClientId is null) || (ordinal == PayloadBytes && _current!.PayloadBytes is null);
    }

    public override object GetValue(int ordinal)
    {
        CheckRow();
        CheckOrdinal(ordinal);
        return ordinal switch
        {
            ReceivedAt => _current!.ReceivedAt,
            PayloadBytes => (object?)_current!.PayloadBytes ?? DBNull.Value,
            _ => (object?)Text(ordinal) ?? DBNull.Value,
        };
    }

    public override long GetBytes(int ordinal, long dataOffset, byte[]? buffer, int bufferOffset, int length)
    {
        CheckRow();
        var bytes = ordinal == PayloadBytes ? _current!.PayloadBytes ?? throw NullValue(ordinal) : throw Mismatch(ordinal, typeof(byte[]));
        if (buffer is null)
        {
            return bytes.Length;
        }

        int count = (int)Math.Clamp(bytes.Length - dataOffset, 0, length);
        bytes.AsSpan((int)dataOffset, count).CopyTo(buffer.AsSpan(bufferOffset));
        return count;
    }

    public override Stream GetStream(int ordinal)
    {
        CheckRow();
        return ordinal == PayloadBytes
            ? new MemoryStream(_current!.PayloadBytes ?? throw NullValue(ordinal), writable: false)
            : throw Mismatch(ordinal, typeof(byte[]));
    }

    public override DateTime GetDateTime(int ordinal)
    {
        CheckRow();
        return ordinal == ReceivedAt ? _current!.ReceivedAt : throw Mismatch(ordinal, typeof(DateTime));
    }

    public override string GetString(int ordinal)
    {
        CheckRow();
        CheckOrdinal(ordinal);
        if (ordinal is ReceivedAt or PayloadBytes)
        {
            throw Mismatch(ordinal, typeof(string));
        }

        return Text(ordinal) ?? throw NullValue(ordinal);
    }

    protected override void OnRow(int row) => _current = _letters[row];

    private string? Text(int ordinal) => ordinal switch
    {
        1 => _current!.Topic,
        2 => _current!.ClientId,
        3 => _current!.Reason,
        4 => _current!.Detail,
        5 => _current!.Payload,
        _ => throw Mismatch(ordinal, typeof(string)),
    };
}

using Saito.Storage.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Dead letters as SqlBulkCopy's row source, columns <see cref="SqlServerSchema.DeadLetterColumns"/>:
/// received_at, topic, client_id (NULL when unknown), reason, detail, payload.
/// </summary>
internal sealed class DeadLetterRowSource : RowListReader
{
    private const int ReceivedAt = 0;
    private const int ClientId = 2;

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
        return ordinal == ReceivedAt ? typeof(DateTime) : typeof(string);
    }

    public override string GetDataTypeName(int ordinal)
    {
        CheckOrdinal(ordinal);
        return ordinal == ReceivedAt ? "datetime2" : "nvarchar";
    }

    public override bool IsDBNull(int ordinal)
    {
        CheckRow();
        CheckOrdinal(ordinal);
        return ordinal == ClientId && _current!.ClientId is null;
    }

    public override object GetValue(int ordinal)
    {
        CheckRow();
        CheckOrdinal(ordinal);
        return ordinal == ReceivedAt ? _current!.ReceivedAt : (object?)Text(ordinal) ?? DBNull.Value;
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
        if (ordinal == ReceivedAt)
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

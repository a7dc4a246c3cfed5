using Saito.Storage.Data;

namespace Saito.Storage;

public abstract partial class ReadingDatabase
{
    /// <inheritdoc cref="IDeviceTable.MarkSeenAsync"/>
    public async Task MarkSeenAsync(IReadOnlyCollection<KeyValuePair<int, DateTime>> seen, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(seen);
        if (seen.Count == 0)
        {
            return;
        }

        string lastSeen = Column("last_seen");
        string sql = $"UPDATE {Table(ReadingTables.DeviceTable)} SET {lastSeen} = {Parameter("t")} " +
                     $"WHERE {Column("id")} = {Parameter("id")} AND ({lastSeen} IS NULL OR {lastSeen} < {Parameter("t")}){End}";
        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        foreach (var (id, at) in seen)
        {
            await using var command = Command(connection, sql, transaction);
            AddTime(command, Parameter("t"), at);
            command.Add(Parameter("id"), id);
            await command.ExecuteNonQueryAsync(cancellationToken);
        }

        await transaction.CommitAsync(cancellationToken);
    }
}

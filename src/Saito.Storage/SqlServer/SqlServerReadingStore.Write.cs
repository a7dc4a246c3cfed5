using System.Data.Common;
using System.Globalization;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging;
using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>The bulk step of the write loop (<see cref="BulkCopyReadingDatabase"/>): <see cref="SqlBulkCopy"/> per kind, duplicates told by 3604.</summary>
public sealed partial class SqlServerReadingStore
{
    /// <summary>
    /// Bulk-copies each kind's readings into its hot table and the dead letters into dead_letter, in one transaction.
    /// <para>
    /// Counting: SQL Server drops a duplicate with the warning "Duplicate key was ignored." (3604), once per
    /// statement and without a count, and SqlBulkCopy counts the rows it sent, not the rows stored. So each kind is
    /// copied after a savepoint, and when its copy draws no 3604 every reading was new. When one does, the copy is
    /// rolled back to the savepoint and the readings go through a staging table instead (bulk copy into a
    /// <c>#temp</c> heap, then one INSERT ... SELECT into the same IGNORE_DUP_KEY table), whose @@ROWCOUNT is the
    /// number stored. <see cref="BatchWriteResult.Inserted"/> and <see cref="BatchWriteResult.Duplicates"/> are
    /// therefore exact, also with concurrent writers of the same readings; this store never answers -1
    /// ("cannot say"). Duplicates cost a second copy of that kind's rows; batches without any cost nothing extra
    /// but a SAVE TRANSACTION per kind.
    /// </para>
    /// <para>
    /// A location or pressure reading without all its values (the columns are NOT NULL), or any reading with a NaN or
    /// infinite value, is refused with an <see cref="ArgumentException"/> before anything is sent; a cancelled write
    /// throws <see cref="OperationCanceledException"/>.
    /// Either way nothing of the batch is stored.
    /// </para>
    /// </summary>
    public override async Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        if (batch.IsEmpty)
        {
            return default;
        }

        foreach (var kind in ReadingKinds.All)
        {
            CheckValues(kind, batch.Of(kind));
        }

        try
        {
            return await OpenAndWriteAsync(batch, cancellationToken);
        }
        catch (Exception ex) when (cancellationToken.IsCancellationRequested && ex is not OperationCanceledException)
        {
            // SqlClient reports a command cancelled mid-flight as a SqlException ("Operation cancelled by user").
            throw new OperationCanceledException("The write was cancelled; its transaction was rolled back.", ex, cancellationToken);
        }
    }

    private async Task<BatchWriteResult> OpenAndWriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        await using var connection = await OpenWriterAsync(cancellationToken);
        try
        {
            return await WriteBatchAsync(connection, batch, cancellationToken);
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // A bulk copy cancelled part way may leave its connection inside the INSERT BULK (SqlClient 6 sends no
            // attention for a faulted asynchronous copy: https://github.com/dotnet/SqlClient/pull/4687); make sure
            // the pool does not hand it out again. Cancellation means shutdown, so the cost does not matter.
            SqlConnection.ClearPool((SqlConnection)connection);
            throw;
        }
    }

    /// <summary>
    /// The copy straight into the IGNORE_DUP_KEY table. SQL Server does not fail on a duplicate, it drops it with 3604
    /// (counted while the copy runs): then null, and the loop rolls back to the savepoint and stages the kind.
    /// </summary>
    private protected override async Task<long?> CopyReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        var sql = (SqlConnection)connection;
        var warnings = new DuplicateWarnings();
        sql.InfoMessage += warnings.OnInfoMessage;
        try
        {
            await CopyReadingsAsync(sql, (SqlTransaction)transaction, ReadingTables.TableName(kind, KeyStrategy, StorageTier.Hot), kind, readings, cancellationToken);
        }
        finally
        {
            sql.InfoMessage -= warnings.OnInfoMessage;
        }

        return warnings.Count == 0 ? readings.Count : null;
    }

    private async Task CopyReadingsAsync(
        SqlConnection connection, SqlTransaction transaction, string destination, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        string target = destination.StartsWith('#') ? destination : SqlServerSql.Table(destination);
        using var bulkCopy = CreateBulkCopy(connection, transaction, target, ReadingTables.Columns(kind, KeyStrategy), TimeoutSeconds);
        using var rows = new ReadingRowSource(kind, KeyStrategy, readings);
        await bulkCopy.WriteToServerAsync(rows, cancellationToken);
    }

    /// <summary>The counting path: copy into the session's staging heap, then insert what is new; answers how many were.</summary>
    private protected override async Task<long> StageReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        string table = ReadingTables.TableName(kind, KeyStrategy, StorageTier.Hot);
        var columns = ReadingTables.Columns(kind, KeyStrategy);
        LogDuplicatesStaged(table, readings.Count);
        await ExecuteAsync(connection, SqlServerSchema.CreateStage(table, columns), cancellationToken, transaction);
        await CopyReadingsAsync((SqlConnection)connection, (SqlTransaction)transaction, SqlServerSchema.StageTable, kind, readings, cancellationToken);
        return Convert.ToInt64(await ScalarAsync(connection, SqlServerSchema.InsertFromStage(table, columns), cancellationToken, transaction), CultureInfo.InvariantCulture);
    }

    private protected override string StoredRowsOfStageSql(ReadingKind kind) =>
        SqlServerSchema.StoredRowsOfStage(ReadingTables.TableName(kind, KeyStrategy, StorageTier.Hot), ReadingTables.ValueColumns(kind));

    private protected override string UpdateValuesSql(ReadingKind kind) =>
        SqlServerSchema.UpdateValues(ReadingTables.TableName(kind, KeyStrategy, StorageTier.Hot), ReadingTables.ValueColumns(kind));

    private protected override DbParameter TimeParameter(DbCommand command, string name, DateTime utc) =>
        new SqlParameter(name, System.Data.SqlDbType.DateTime2) { Value = utc };

    private protected override async Task CopyDeadLettersAsync(
        DbConnection connection, DbTransaction transaction, List<DeadLetter> deadLetters, CancellationToken cancellationToken)
    {
        using var bulkCopy = CreateBulkCopy(
            (SqlConnection)connection, (SqlTransaction)transaction, SqlServerSql.Table(ReadingTables.DeadLetterTable), SqlServerSchema.DeadLetterColumns, TimeoutSeconds);
        using var rows = new DeadLetterRowSource(deadLetters);
        await bulkCopy.WriteToServerAsync(rows, cancellationToken);
    }

    /// <summary>
    /// Location and pressure readings carry every value (the columns are NOT NULL), and no value is NaN or infinite
    /// (SQL Server's float holds neither, and would refuse the whole copy); say which reading and column, before any
    /// round trip.
    /// </summary>
    private static void CheckValues(ReadingKind kind, IReadOnlyList<Reading> readings)
    {
        bool nullable = SqlServerSchema.ValuesNullable(kind);
        var columns = ReadingTables.ValueColumns(kind);
        for (int i = 0; i < readings.Count; i++)
        {
            for (int v = 0; v < columns.Count; v++)
            {
                double? value = ReadingTables.Value(readings[i], v);
                if (value is null ? !nullable : !double.IsFinite(value.GetValueOrDefault()))
                {
                    var reading = readings[i];
                    string problem = value is null ? $"needs {columns[v]}" : $"has {columns[v]} = {value.GetValueOrDefault().ToString(CultureInfo.InvariantCulture)}, which SQL Server's float cannot hold";
                    throw new ArgumentException(
                        $"A {ReadingKinds.Name(kind)} reading {problem} " +
                        $"(device {reading.DeviceId}, channel {reading.Channel}, {reading.Timestamp:O}); the batch is not written.",
                        nameof(readings));
                }
            }
        }
    }

    /// <summary>
    /// The bulk copy into <paramref name="destination"/> (<c>[dbo].[table]</c> or the <c>#stage</c>): streaming from
    /// the row source (no buffering of the batch), one batch on the wire (BatchSize 0: all rows in one INSERT BULK,
    /// inside the caller's transaction), Storage:CommandTimeoutSeconds, and every column mapped by name, so the
    /// table's column order does not matter. Default options: no TABLOCK (writers run in parallel), no triggers, and
    /// no CHECK_CONSTRAINTS (there are none). No ORDER hint is given, so SQL Server sorts the rows by the clustered
    /// key before inserting them (BULK INSERT's ORDER option describes this); a deadlock between writers whose
    /// batches overlap is still possible, and is transient (1205).
    /// </summary>
    internal static SqlBulkCopy CreateBulkCopy(SqlConnection connection, SqlTransaction? transaction, string destination, IReadOnlyList<string> columns, int timeoutSeconds)
    {
        var bulkCopy = new SqlBulkCopy(connection, SqlBulkCopyOptions.Default, transaction)
        {
            DestinationTableName = destination,
            EnableStreaming = true,
            BatchSize = 0,
            BulkCopyTimeout = timeoutSeconds,
        };
        foreach (string column in columns)
        {
            bulkCopy.ColumnMappings.Add(column, column);
        }

        return bulkCopy;
    }


    [LoggerMessage(4301, LogLevel.Debug, "{Table}: a copy of {Rows} readings held duplicates (3604); copying them again through a staging table to count them")]
    private partial void LogDuplicatesStaged(string table, int rows);

    /// <summary>Counts "Duplicate key was ignored." (3604) messages; SqlClient may raise them on any thread.</summary>
    private sealed class DuplicateWarnings
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void OnInfoMessage(object sender, SqlInfoMessageEventArgs e)
        {
            foreach (SqlError error in e.Errors)
            {
                if (error.Number == DuplicateKeyIgnored)
                {
                    Interlocked.Increment(ref _count);
                }
            }
        }
    }
}


using System.Data;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging;

namespace Saito.Storage.SqlServer;

/// <summary>The schema: filegroups, tables and views created under an application lock, and the checks that follow.</summary>
public sealed partial class SqlServerReadingStore
{
    private const string SchemaLock = "saito:schema";

    /// <summary>Databases Saito must not create tables in (a connection string without Database= lands in the login's default, often master).</summary>
    private static readonly HashSet<string> SystemDatabases = new(StringComparer.OrdinalIgnoreCase) { "master", "model", "msdb", "tempdb" };

    /// <summary>
    /// Creates what is missing, under an application lock so that two Saito instances starting together do not
    /// race: the configured filegroups and their files (when a folder is configured), then <c>device</c>,
    /// <c>dead_letter</c>, the hot and archive reading tables of every key strategy (<see cref="SqlServerSchema.TableSteps"/>)
    /// and the views (<see cref="SqlServerSchema.ViewSteps"/>); the report names each by its table or view. Each statement
    /// is the one in <c>sql/sqlserver/001_schema.sql</c>.
    /// Then checks that every reading table drops duplicates (IGNORE_DUP_KEY on its primary key), because a table
    /// created another way without it would fail every batch that holds a redelivered reading.
    /// </summary>
    public override async Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken)
    {
        var created = new List<string>();
        var existing = new List<string>();
        await using var connection = (SqlConnection)await OpenWriterAsync(cancellationToken);
        if (SystemDatabases.Contains(connection.Database))
        {
            throw new InvalidOperationException(
                $"{Describe()}: the connection is in system database '{connection.Database}'. Name Saito's database in Storage:ConnectionString (Database=...).");
        }

        await AcquireSchemaLockAsync(connection, cancellationToken);
        try
        {
            var tables = await ReadStringsAsync(connection, "SELECT [name] FROM sys.objects WHERE [schema_id] = SCHEMA_ID(N'dbo') AND [type] IN ('U', 'V');", cancellationToken);
            var filegroups = await ReadFilegroupsAsync(connection, cancellationToken);

            foreach (var step in _schema.FilegroupSteps(connection.Database))
            {
                bool present = step.Object == SqlServerSchemaObject.Filegroup
                    ? filegroups.ContainsKey(step.Target)
                    : filegroups.TryGetValue(step.Target, out var files) && files.Count > 0;
                await ExecuteAsync(connection, step.Sql, cancellationToken);
                if (present)
                {
                    existing.Add(step.Name);
                }
                else
                {
                    created.Add(step.Name);
                    LogAdded(step.Name, Describe());
                }
            }

            await CheckFilegroupsAsync(connection, cancellationToken);

            foreach (var step in _schema.TableSteps().Concat(SqlServerSchema.ViewSteps()))
            {
                bool present = tables.Contains(step.Target);
                await ExecuteAsync(connection, step.Sql, cancellationToken);
                (present ? existing : created).Add(step.Name);
            }

            await CheckDuplicatesAreIgnoredAsync(connection, cancellationToken);
        }
        finally
        {
            await ReleaseSchemaLockAsync(connection);
        }

        return new SchemaReport(created, existing);
    }

    private async Task<HashSet<string>> ReadStringsAsync(SqlConnection connection, string sql, CancellationToken cancellationToken)
    {
        await using var command = Command(connection, sql);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        while (await reader.ReadAsync(cancellationToken))
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    /// <summary>Filegroup name to the physical names of its files.</summary>
    private async Task<Dictionary<string, List<string>>> ReadFilegroupsAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        await using var command = Command(connection,
            "SELECT g.[name], f.[physical_name] FROM sys.filegroups AS g LEFT JOIN sys.database_files AS f ON f.[data_space_id] = g.[data_space_id];");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var filegroups = new Dictionary<string, List<string>>(StringComparer.OrdinalIgnoreCase);
        while (await reader.ReadAsync(cancellationToken))
        {
            string name = reader.GetString(0);
            if (!filegroups.TryGetValue(name, out var files))
            {
                filegroups[name] = files = [];
            }

            if (!await reader.IsDBNullAsync(1, cancellationToken))
            {
                files.Add(reader.GetString(1));
            }
        }

        return filegroups;
    }

    /// <summary>A configured filegroup must exist and hold a file by now; say how to fix it when not, rather than fail on CREATE TABLE.</summary>
    private async Task CheckFilegroupsAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        if (_schema.ConfiguredFilegroups().Count == 0)
        {
            return;
        }

        var filegroups = await ReadFilegroupsAsync(connection, cancellationToken);
        foreach (string filegroup in _schema.ConfiguredFilegroups())
        {
            if (!filegroups.TryGetValue(filegroup, out var files))
            {
                throw new InvalidOperationException(
                    $"Filegroup {SqlServerSql.Quote(filegroup)} does not exist in {Describe()}. Create it (ALTER DATABASE ... ADD FILEGROUP, then ADD FILE), " +
                    "or set Storage:SqlServer:HotFilePath / ArchiveFilePath to a folder on the database server and Saito will.");
            }

            if (files.Count == 0)
            {
                throw new InvalidOperationException(
                    $"Filegroup {SqlServerSql.Quote(filegroup)} in {Describe()} has no data file, so no table can be created on it. " +
                    "Add one (ALTER DATABASE ... ADD FILE ... TO FILEGROUP), or set its Storage:SqlServer:*FilePath and Saito will.");
            }
        }
    }

    private async Task CheckDuplicatesAreIgnoredAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        var readingTables = SqlServerSchema.ReadingTableNames();
        await using var command = (SqlCommand)Command(connection,
            "SELECT t.[name] FROM sys.tables AS t " +
            "LEFT JOIN sys.indexes AS i ON i.[object_id] = t.[object_id] AND i.[is_primary_key] = 1 " +
            "WHERE t.[schema_id] = SCHEMA_ID(N'dbo') AND COALESCE(i.[ignore_dup_key], 0) = 0 " +
            $"AND t.[name] IN ({string.Join(", ", readingTables.Select((_, i) => "@t" + i))});");
        for (int i = 0; i < readingTables.Count; i++)
        {
            command.Parameters.Add(new SqlParameter("@t" + i, SqlDbType.NVarChar, 128) { Value = readingTables[i] });
        }

        var wrong = new List<string>();
        await using (var reader = await command.ExecuteReaderAsync(cancellationToken))
        {
            while (await reader.ReadAsync(cancellationToken))
            {
                wrong.Add(reader.GetString(0));
            }
        }

        if (wrong.Count > 0)
        {
            string fixes = string.Join(" ", wrong.Select(table =>
                $"ALTER INDEX {SqlServerSql.Quote(SqlServerSchema.PrimaryKeyName(table))} ON {SqlServerSql.Table(table)} REBUILD WITH (IGNORE_DUP_KEY = ON);"));
            throw new InvalidOperationException(
                $"Reading table(s) {string.Join(", ", wrong)} in {Describe()} have no primary key WITH (IGNORE_DUP_KEY = ON), so a redelivered reading " +
                $"would fail its whole batch. Create them as sql/sqlserver/001_schema.sql does, or (if the primary key has that name) run: {fixes}");
        }
    }

    private async Task AcquireSchemaLockAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        await using var command = (SqlCommand)Command(connection, "sp_getapplock");
        command.CommandType = CommandType.StoredProcedure;
        command.Parameters.Add(new SqlParameter("@Resource", SqlDbType.NVarChar, 255) { Value = SchemaLock });
        command.Parameters.Add(new SqlParameter("@LockMode", SqlDbType.VarChar, 32) { Value = "Exclusive" });
        command.Parameters.Add(new SqlParameter("@LockOwner", SqlDbType.VarChar, 32) { Value = "Session" });
        // A second less than the command's own timeout, so that a long wait ends as "lock not granted", not as a client timeout.
        command.Parameters.Add(new SqlParameter("@LockTimeout", SqlDbType.Int) { Value = Math.Max(0, TimeoutSeconds - 1) * 1000 });
        var result = command.Parameters.Add(new SqlParameter("@return", SqlDbType.Int) { Direction = ParameterDirection.ReturnValue });
        await command.ExecuteNonQueryAsync(cancellationToken);
        int code = (int)result.Value;
        if (code < 0)
        {
            // -1 timeout, -2 cancelled, -3 deadlock victim: another instance is creating the schema; try again later.
            throw new TimeoutException($"Could not take the schema lock '{SchemaLock}' in {Describe()} within {TimeoutSeconds} s (sp_getapplock returned {code}).");
        }
    }

    private async Task ReleaseSchemaLockAsync(SqlConnection connection)
    {
        try
        {
            await using var command = (SqlCommand)Command(connection, "sp_releaseapplock");
            command.CommandType = CommandType.StoredProcedure;
            command.Parameters.Add(new SqlParameter("@Resource", SqlDbType.NVarChar, 255) { Value = SchemaLock });
            command.Parameters.Add(new SqlParameter("@LockOwner", SqlDbType.VarChar, 32) { Value = "Session" });
            await command.ExecuteNonQueryAsync(CancellationToken.None);
        }
        catch (Exception ex) when (ex is SqlException or InvalidOperationException)
        {
            // The lock belongs to the session: make sure the session ends rather than go back to the pool holding it.
            LogSchemaLockNotReleased(ex);
            SqlConnection.ClearPool(connection);
        }
    }

    [LoggerMessage(4300, LogLevel.Information, "Added {What} to {Store}")]
    private partial void LogAdded(string what, string store);

    [LoggerMessage(4303, LogLevel.Warning, "Could not release the schema lock; its connection is dropped from the pool instead")]
    private partial void LogSchemaLockNotReleased(Exception exception);
}

using System.Data.Common;

namespace Saito.Storage.Data;

/// <summary>The command helpers every store and archive engine uses, written once on the ADO.NET base types.</summary>
internal static class DbCommands
{
    /// <summary>
    /// A command on the connection (and transaction). With <paramref name="timeoutSeconds"/> unset the connection's own
    /// timeout holds (Npgsql's data sources and SQLite's connection strings carry Storage:CommandTimeoutSeconds already).
    /// </summary>
    public static DbCommand Command(this DbConnection connection, string sql, int? timeoutSeconds = null, DbTransaction? transaction = null)
    {
        var command = connection.CreateCommand();
        command.CommandText = sql;
        if (timeoutSeconds is { } seconds)
        {
            command.CommandTimeout = seconds;
        }

        command.Transaction = transaction;
        return command;
    }

    /// <summary>Adds a parameter; its name carries the dialect's prefix (<c>$name</c>, <c>@name</c>).</summary>
    public static DbParameter Add(this DbCommand command, string name, object? value)
    {
        var parameter = command.CreateParameter();
        parameter.ParameterName = name;
        parameter.Value = value ?? DBNull.Value;
        command.Parameters.Add(parameter);
        return parameter;
    }

    public static async Task<int> ExecuteAsync(
        this DbConnection connection, string sql, CancellationToken cancellationToken, int? timeoutSeconds = null, DbTransaction? transaction = null)
    {
        await using var command = connection.Command(sql, timeoutSeconds, transaction);
        return await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public static async Task<object?> ScalarAsync(
        this DbConnection connection, string sql, CancellationToken cancellationToken, int? timeoutSeconds = null, DbTransaction? transaction = null)
    {
        await using var command = connection.Command(sql, timeoutSeconds, transaction);
        return await command.ExecuteScalarAsync(cancellationToken);
    }

    public static async Task<T> ScalarAsync<T>(
        this DbConnection connection, string sql, CancellationToken cancellationToken, int? timeoutSeconds = null, DbTransaction? transaction = null) =>
        (T)(await connection.ScalarAsync(sql, cancellationToken, timeoutSeconds, transaction))!;

    /// <summary>
    /// A lock held by a session for as long as its connection stays open: runs <paramref name="sql"/> on the connection
    /// and keeps it (the returned handle closes it) when <paramref name="granted"/> says the lock was taken; otherwise
    /// closes it and answers null. Closing the connection, or the process dying, releases the lock.
    /// </summary>
    public static async Task<IAsyncDisposable?> HoldSessionLockAsync(
        this DbConnection connection, string sql, Func<object?, bool> granted, CancellationToken cancellationToken, int? timeoutSeconds = null)
    {
        try
        {
            if (granted(await connection.ScalarAsync(sql, cancellationToken, timeoutSeconds)))
            {
                return connection;
            }
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }

        await connection.DisposeAsync();
        return null;
    }
}

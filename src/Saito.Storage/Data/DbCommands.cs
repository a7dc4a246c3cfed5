using System.Data.Common;

namespace Saito.Storage.Data;

/// <summary>The command helpers every store and archive engine uses, written once on the ADO.NET base types.</summary>
internal static class DbCommands
{
    /// <summary>A command on the connection (and transaction) with Storage:CommandTimeoutSeconds.</summary>
    public static DbCommand Command(this DbConnection connection, string sql, int timeoutSeconds, DbTransaction? transaction = null)
    {
        var command = connection.CreateCommand();
        command.CommandText = sql;
        command.CommandTimeout = timeoutSeconds;
        command.Transaction = transaction;
        return command;
    }

    /// <summary>Adds a parameter whose name carries the dialect's prefix (<c>$name</c>, <c>@name</c>).</summary>
    public static DbParameter Add(this DbCommand command, string name, object? value)
    {
        var parameter = command.CreateParameter();
        parameter.ParameterName = name;
        parameter.Value = value ?? DBNull.Value;
        command.Parameters.Add(parameter);
        return parameter;
    }

    public static async Task<int> ExecuteAsync(this DbConnection connection, string sql, int timeoutSeconds, CancellationToken cancellationToken, DbTransaction? transaction = null)
    {
        await using var command = connection.Command(sql, timeoutSeconds, transaction);
        return await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public static async Task<object?> ScalarAsync(this DbConnection connection, string sql, int timeoutSeconds, CancellationToken cancellationToken, DbTransaction? transaction = null)
    {
        await using var command = connection.Command(sql, timeoutSeconds, transaction);
        return await command.ExecuteScalarAsync(cancellationToken);
    }
}

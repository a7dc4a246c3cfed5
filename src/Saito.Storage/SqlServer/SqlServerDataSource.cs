using System.Data.Common;
using Microsoft.Data.SqlClient;

namespace Saito.Storage.SqlServer;

/// <summary>
/// SQL Server's <see cref="DbDataSource"/>: SqlClient has none of its own. Opening refuses, with the fix, a process in
/// globalization-invariant mode (<see cref="SqlServerReadingStore.InvariantGlobalizationMessage"/>), and leaves no
/// connection behind when the open fails.
/// </summary>
internal sealed class SqlServerDataSource(string connectionString) : DbDataSource
{
    public override string ConnectionString { get; } = connectionString;

    protected override DbConnection CreateDbConnection() => new SqlConnection(ConnectionString);

    protected override DbConnection OpenDbConnection()
    {
        RefuseInvariantGlobalization();
        var connection = new SqlConnection(ConnectionString);
        try
        {
            connection.Open();
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    protected override async ValueTask<DbConnection> OpenDbConnectionAsync(CancellationToken cancellationToken = default)
    {
        RefuseInvariantGlobalization();
        return await OpenConnectionAsync(ConnectionString, cancellationToken);
    }

    private static void RefuseInvariantGlobalization()
    {
        if (SqlServerReadingStore.GlobalizationInvariant.Value)
        {
            throw new NotSupportedException(SqlServerReadingStore.InvariantGlobalizationMessage);
        }
    }

    /// <summary>An open connection, or none left behind: the store's and the archive engine's way in.</summary>
    public static async Task<SqlConnection> OpenConnectionAsync(string connectionString, CancellationToken cancellationToken)
    {
        var connection = new SqlConnection(connectionString);
        try
        {
            await connection.OpenAsync(cancellationToken);
            return connection;
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }
}

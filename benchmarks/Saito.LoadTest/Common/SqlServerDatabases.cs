using Microsoft.Data.SqlClient;

namespace Saito.LoadTest.Common;

/// <summary>
/// Fresh, throwaway databases on the SQL Server that <c>--sqlserver</c> points at (a login with CREATE DATABASE).
/// Not run on the machine this tool was written on (no SQL Server there); the statements are plain T-SQL.
/// </summary>
internal static class SqlServerDatabases
{
    public static async Task<string> CreateAsync(string server, string name, CancellationToken token)
    {
        await ExecuteAsync(server, $"IF DB_ID(N'{name}') IS NOT NULL BEGIN ALTER DATABASE [{name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [{name}]; END; CREATE DATABASE [{name}];", token);
        return new SqlConnectionStringBuilder(server) { InitialCatalog = name }.ConnectionString;
    }

    public static async Task DropAsync(string server, string name, CancellationToken token)
    {
        SqlConnection.ClearAllPools();
        await ExecuteAsync(server, $"IF DB_ID(N'{name}') IS NOT NULL BEGIN ALTER DATABASE [{name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [{name}]; END;", token);
    }

    public static async Task<string> DescribeAsync(string server, CancellationToken token)
    {
        await using var connection = new SqlConnection(server);
        await connection.OpenAsync(token);
        await using var command = new SqlCommand("SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(64)) + N' ' + CAST(SERVERPROPERTY('Edition') AS nvarchar(128))", connection);
        return (string)(await command.ExecuteScalarAsync(token))!;
    }

    private static async Task ExecuteAsync(string server, string sql, CancellationToken token)
    {
        var master = new SqlConnectionStringBuilder(server) { InitialCatalog = "master" }.ConnectionString;
        await using var connection = new SqlConnection(master);
        await connection.OpenAsync(token);
        await using var command = new SqlCommand(sql, connection) { CommandTimeout = 300 };
        await command.ExecuteNonQueryAsync(token);
    }
}

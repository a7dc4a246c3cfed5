using Npgsql;

namespace Saito.Testing;

/// <summary>Creating and dropping throwaway databases on a PostgreSQL server: the one place that does it.</summary>
public static class PostgresDatabases
{
    /// <summary>
    /// Creates an empty database <paramref name="name"/> (dropping one of that name first) through
    /// <paramref name="server"/>, and returns <paramref name="server"/> pointed at it.
    /// </summary>
    public static async Task<string> CreateAsync(string server, string name, CancellationToken token = default)
    {
        await using var admin = new NpgsqlConnection(server);
        await admin.OpenAsync(token);
        await using (var drop = new NpgsqlCommand($"DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)", admin))
        {
            await drop.ExecuteNonQueryAsync(token);
        }

        await using (var create = new NpgsqlCommand($"CREATE DATABASE \"{name}\"", admin))
        {
            await create.ExecuteNonQueryAsync(token);
        }

        return new NpgsqlConnectionStringBuilder(server) { Database = name }.ConnectionString;
    }

    /// <summary>Drops <paramref name="name"/>, closing its connections (this process's pooled ones and anyone else's).</summary>
    public static async Task DropAsync(string server, string name, CancellationToken token = default)
    {
        NpgsqlConnection.ClearAllPools();
        await using var admin = new NpgsqlConnection(server);
        await admin.OpenAsync(token);
        await using var drop = new NpgsqlCommand($"DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)", admin);
        await drop.ExecuteNonQueryAsync(token);
    }
}

using Microsoft.Data.SqlClient;
using Npgsql;
using Saito.Storage.Keys;

namespace Saito.Storage;

/// <summary>The connection pools Saito's server keeps to PostgreSQL or SQL Server (<see cref="ConnectionBudget"/>).</summary>
public enum ConnectionPool
{
    /// <summary>The writers' batches, device registration, <c>last_seen</c> and the schema: <c>Storage:Writers</c> + 1.</summary>
    Writes,

    /// <summary>Reading queries, dead letters, counts and the health check: <c>Storage:QueryConnections</c>.</summary>
    Queries,

    /// <summary>The registry (EF Core): owners, assignments, check-ins, notices, the dashboard's pages: <c>Storage:QueryConnections</c>.</summary>
    Registry,
}

/// <summary>
/// How many connections Saito's server may hold to PostgreSQL or SQL Server, whatever arrives: each pool it opens has an
/// explicit maximum (<c>Maximum Pool Size</c>; one set in <c>Storage:ConnectionString</c> is replaced), and past it a
/// caller waits for a connection to come back rather than opening another. In all, <see cref="Maximum"/>:
/// <c>Storage:Writers + 1 + 2 x Storage:QueryConnections</c> (9 with the defaults). The archiver
/// (<c>saito-archiver</c>, or <c>Archiver:Schedule</c> in the server) is not counted here: see docs/archiver.md.
/// Each pool has its own application name (<c>saito</c>, <c>saito-queries</c>, <c>saito-registry</c>, or the one set in
/// the connection string with <c>-queries</c> and <c>-registry</c> added), so that <c>pg_stat_activity</c> and
/// <c>sys.dm_exec_sessions</c> show which is which.
/// </summary>
public static class ConnectionBudget
{
    /// <summary>The application name when the connection string sets none.</summary>
    public const string DefaultApplicationName = "saito";

    /// <summary>Connections of one pool, at most.</summary>
    public static int PoolSize(StorageOptions options, ConnectionPool pool)
    {
        ArgumentNullException.ThrowIfNull(options);
        return pool switch
        {
            // One writer holds one connection while it commits a batch; the one more is device registration (one
            // batch of new serials at a time) and the last_seen flush, which take turns.
            ConnectionPool.Writes => options.EffectiveWriters + 1,
            ConnectionPool.Queries or ConnectionPool.Registry => options.QueryConnections,
            _ => throw new ArgumentOutOfRangeException(nameof(pool), pool, null),
        };
    }

    /// <summary>All the server's pools together: <c>Storage:Writers + 1 + 2 x Storage:QueryConnections</c>.</summary>
    public static int Maximum(StorageOptions options) =>
        PoolSize(options, ConnectionPool.Writes) + PoolSize(options, ConnectionPool.Queries) + PoolSize(options, ConnectionPool.Registry);

    /// <summary>The pool's application name: the configured one (or <c>saito</c>) for writes, with <c>-queries</c> or <c>-registry</c> added.</summary>
    public static string ApplicationName(string? configured, ConnectionPool pool)
    {
        string name = string.IsNullOrEmpty(configured) ? DefaultApplicationName : configured;
        return pool switch
        {
            ConnectionPool.Writes => name,
            ConnectionPool.Queries => name + "-queries",
            _ => name + "-registry",
        };
    }

    /// <summary><c>Storage:ConnectionString</c> for one PostgreSQL pool: its maximum, its application name, the command timeout.</summary>
    public static NpgsqlConnectionStringBuilder Postgres(StorageOptions options, ConnectionPool pool)
    {
        ArgumentNullException.ThrowIfNull(options);
        var builder = new NpgsqlConnectionStringBuilder(options.ConnectionString)
        {
            CommandTimeout = options.CommandTimeoutSeconds,
            MaxPoolSize = PoolSize(options, pool),
        };
        builder.MinPoolSize = Math.Min(builder.MinPoolSize, builder.MaxPoolSize);
        builder.ApplicationName = ApplicationName(builder.ApplicationName, pool);
        return builder;
    }

    /// <summary>
    /// <c>Storage:ConnectionString</c> for one SQL Server pool: its maximum and application name. SqlClient pools by
    /// connection string, so the three differ (by name) and are three pools.
    /// </summary>
    public static SqlConnectionStringBuilder SqlServer(StorageOptions options, ConnectionPool pool)
    {
        ArgumentNullException.ThrowIfNull(options);
        var builder = new SqlConnectionStringBuilder(options.ConnectionString) { Pooling = true, MaxPoolSize = PoolSize(options, pool) };
        builder.MinPoolSize = Math.Min(builder.MinPoolSize, builder.MaxPoolSize);
        builder.ApplicationName = ApplicationName(builder.ShouldSerialize("Application Name") ? builder.ApplicationName : null, pool);
        return builder;
    }

    /// <summary>The pool's connection string for a server database; null for SQLite (a file: no server connections).</summary>
    public static string? ConnectionString(StorageOptions options, ConnectionPool pool)
    {
        ArgumentNullException.ThrowIfNull(options);
        return options.Provider switch
        {
            StorageProvider.Postgres => Postgres(options, pool).ConnectionString,
            StorageProvider.SqlServer => SqlServer(options, pool).ConnectionString,
            _ => null,
        };
    }
}

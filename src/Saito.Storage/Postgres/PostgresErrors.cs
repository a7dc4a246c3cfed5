using System.Net.Sockets;
using Npgsql;

namespace Saito.Storage.Postgres;

/// <summary>
/// Which PostgreSQL errors are worth retrying, by SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html),
/// so that the rule can be tested without a server that fails that way.
/// </summary>
internal static class PostgresErrors
{
    /// <summary>
    /// What Npgsql calls transient (lost connections, timeouts), serialization failures (40001), deadlocks (40P01), a
    /// server shutting down or starting (57P01, 57P03), every connection exception (class 08), and every
    /// <see cref="IsStorageOutageSqlState">storage outage</see>; and the network errors underneath, wherever they sit in
    /// the chain of inner exceptions.
    /// </summary>
    public static bool IsTransient(Exception? exception)
    {
        for (var current = exception; current is not null; current = current.InnerException)
        {
            switch (current)
            {
                case PostgresException postgres when postgres.IsTransient || IsTransientSqlState(postgres.SqlState):
                case NpgsqlException { IsTransient: true } and not PostgresException:
                case TimeoutException:
                case IOException:
                case SocketException:
                    return true;
                case OperationCanceledException:
                    return false;
            }
        }

        return false;
    }

    /// <summary>A <see cref="PostgresException"/> in the chain whose SQLSTATE is a <see cref="IsStorageOutageSqlState">storage outage</see>.</summary>
    public static bool IsStorageOutage(Exception? exception)
    {
        for (var current = exception; current is not null; current = current.InnerException)
        {
            if (current is PostgresException postgres && IsStorageOutageSqlState(postgres.SqlState))
            {
                return true;
            }
        }

        return false;
    }

    public static bool IsTransientSqlState(string sqlState) =>
        sqlState is PostgresErrorCodes.SerializationFailure or PostgresErrorCodes.DeadlockDetected or PostgresErrorCodes.AdminShutdown
            or PostgresErrorCodes.CannotConnectNow
        || sqlState.StartsWith("08", StringComparison.Ordinal)
        || IsStorageOutageSqlState(sqlState);

    /// <summary>
    /// Class 53, insufficient resources (53000, 53100 disk_full, 53200 out_of_memory, 53300 too_many_connections, 53400
    /// configuration_limit_exceeded), and 58030 io_error: the server cannot take the data now, whatever the data. A
    /// full disk is not bad data; it passes when space is freed, and the batch must wait for that, unacknowledged.
    /// </summary>
    public static bool IsStorageOutageSqlState(string sqlState) =>
        sqlState.StartsWith("53", StringComparison.Ordinal) || sqlState == PostgresErrorCodes.IoError;
}

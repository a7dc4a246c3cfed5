using System.Collections.Frozen;
using System.Net.Sockets;
using Microsoft.Data.SqlClient;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Which SQL Server errors are worth retrying: the connection went away, the server is busy or failing over,
/// a deadlock or a lock or command timeout, or its storage is full (<see cref="StorageFullNumbers"/>). Everything else (a constraint, a type, a permission, a missing
/// table) fails the same way the second time and is not.
/// </summary>
internal static class SqlServerErrors
{
    /// <summary>Unique index (2601) and unique or primary key constraint (2627) violations.</summary>
    public static readonly FrozenSet<int> UniqueViolations = FrozenSet.Create(2601, 2627);

    /// <summary>
    /// <see cref="SqlError.Number"/>s that are transient. Sources: SqlClient's own transient error list (the remarks
    /// of https://learn.microsoft.com/dotnet/api/microsoft.data.sqlclient.sqlconfigurableretryfactory), Azure SQL's
    /// transient errors (https://learn.microsoft.com/azure/azure-sql/database/troubleshoot-common-errors-issues),
    /// and the network errors SqlClient reports from the socket layer. Number 0 (no server error) is handled
    /// apart, by severity.
    /// </summary>
    public static readonly FrozenSet<int> TransientNumbers = FrozenSet.Create(
        -2,     // client-side timeout: command (CommandTimeout) or bulk copy (BulkCopyTimeout) expired
        2,      // network: the system cannot find the file specified (named pipes; native SNI)
        40,     // could not open a connection to SQL Server
        53,     // the network path was not found
        64,     // the specified network name is no longer available
        121,    // the semaphore timeout period has expired (network)
        233,    // no process is on the other end of the pipe (connection closed during login)
        258,    // wait operation timed out (network)
        997,    // overlapped I/O operation is in progress (network, during login)
        1204,   // the engine cannot obtain a LOCK resource right now
        1205,   // deadlock victim: the transaction was rolled back, run it again
        1222,   // lock request time out period exceeded (SET LOCK_TIMEOUT)
        4060,   // cannot open database requested by the login (typical during a failover)
        4221,   // login to read-secondary failed: replica is starting
        10053,  // transport: connection aborted by the software in the host machine
        10054,  // transport: connection reset by peer
        10060,  // transport: connection attempt timed out
        10928,  // Azure: resource limit reached (requests or sessions)
        10929,  // Azure: minimum guarantee not available, server too busy
        40143,  // Azure: the service encountered an error processing the request
        40197,  // Azure: the service encountered an error (reconfiguration, failover)
        40501,  // Azure: the service is currently busy
        40540,  // Azure: the service encountered an error processing the request
        40613,  // Azure: database is not currently available (failover, upgrade)
        42108,  // Azure serverless: cannot connect while the database is paused
        42109,  // Azure serverless: the database is resuming
        49918,  // Azure: not enough resources to process the request
        49919,  // Azure: too many create or update operations in progress
        49920); // Azure: too many operations in progress

    /// <summary>
    /// <see cref="SqlError.Number"/>s that say the database's storage is full: the server cannot take the data now,
    /// whatever the data, and can once space is freed (a log backup, a grown file, a freed disk). Transient too, and
    /// never a reason to take a message for bad data. Sources: the database engine's error reference
    /// (https://learn.microsoft.com/sql/relational-databases/errors-events/database-engine-events-and-errors) and Azure
    /// SQL's resource-limit errors.
    /// </summary>
    public static readonly FrozenSet<int> StorageFullNumbers = FrozenSet.Create(
        1101,   // could not allocate a new page for the database: no more pages in the filegroup (disk full)
        1105,   // could not allocate space for an object in the filegroup: the filegroup is full
        9002,   // the transaction log for the database is full
        40544,  // Azure: the database has reached its size quota
        40552); // Azure: the session was ended for using too much transaction log space

    /// <summary>
    /// True for a <see cref="SqlException"/> any of whose errors is in <see cref="TransientNumbers"/>, or that has no
    /// server error number but the severity of a broken connection (class 20 or more, as SqlClient reports a
    /// refused or reset TCP connection on Linux: number 0, class 20); and for <see cref="TimeoutException"/>,
    /// <see cref="IOException"/> and <see cref="SocketException"/>, wherever they sit in the chain of inner exceptions.
    /// </summary>
    public static bool IsTransient(Exception? exception)
    {
        for (int depth = 0; exception is not null && depth < 16; depth++, exception = exception.InnerException)
        {
            switch (exception)
            {
                case SqlException sql when IsTransientSql(sql):
                case TimeoutException:
                case IOException:
                case SocketException:
                    return true;
            }
        }

        return false;
    }

    /// <summary>A <see cref="SqlException"/> in the chain with an error in <see cref="StorageFullNumbers"/>.</summary>
    public static bool IsStorageOutage(Exception? exception)
    {
        for (int depth = 0; exception is not null && depth < 16; depth++, exception = exception.InnerException)
        {
            if (exception is SqlException sql && Any(sql, IsStorageFullNumber))
            {
                return true;
            }
        }

        return false;
    }

    public static bool IsUniqueViolation(SqlException exception) => Any(exception, UniqueViolations.Contains);

    /// <summary>
    /// Whether a server error number is worth retrying: the seam the tests use, since a <see cref="SqlException"/>
    /// cannot be made outside SqlClient.
    /// </summary>
    public static bool IsTransientNumber(int number) => TransientNumbers.Contains(number) || IsStorageFullNumber(number);

    public static bool IsStorageFullNumber(int number) => StorageFullNumbers.Contains(number);

    private static bool IsTransientSql(SqlException exception) =>
        Any(exception, IsTransientNumber) || (exception.Number == 0 && exception.Class >= 20);

    private static bool Any(SqlException exception, Func<int, bool> predicate)
    {
        if (predicate(exception.Number))
        {
            return true;
        }

        foreach (SqlError error in exception.Errors)
        {
            if (predicate(error.Number))
            {
                return true;
            }
        }

        return false;
    }
}

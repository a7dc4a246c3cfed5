using System.Globalization;
using Microsoft.Data.Sqlite;

namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>What a test's own Saito stored in its SQLite hot database.</summary>
public static class StoredReadings
{
    /// <summary>Biosensor readings stored for the device with this serial, read through <paramref name="connection"/>.</summary>
    public static async Task<long> BiosensorCountAsync(SqliteConnection connection, string serial, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        await using var count = connection.CreateCommand();
        count.CommandText = "SELECT COUNT(*) FROM v_biosensor WHERE serial = $device";
        count.Parameters.AddWithValue("$device", serial);
        return Convert.ToInt64(await count.ExecuteScalarAsync(cancellationToken), CultureInfo.InvariantCulture);
    }

    /// <summary>The same, opening <paramref name="hotDatabase"/> read-only.</summary>
    public static async Task<long> BiosensorCountAsync(string hotDatabase, string serial, CancellationToken cancellationToken)
    {
        await using var db = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = hotDatabase, Mode = SqliteOpenMode.ReadOnly }.ToString());
        await db.OpenAsync(cancellationToken);
        return await BiosensorCountAsync(db, serial, cancellationToken);
    }
}

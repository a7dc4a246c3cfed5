using System.Text;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>
/// Saito's SQLite file held with <c>BEGIN EXCLUSIVE</c> by another connection: writes wait (retried as transient), so
/// publish verdicts and acknowledgements are held until <see cref="ReleaseAsync"/>. A first reading is committed
/// before the hold, so the schema is ready and what follows waits for the lock, not for start-up.
/// </summary>
public sealed class HeldDatabase : IAsyncDisposable
{
    private HeldDatabase(SqliteConnection connection) => Connection = connection;

    /// <summary>The holding connection, usable for queries once released.</summary>
    public SqliteConnection Connection { get; }

    public static async Task<HeldDatabase> HoldAsync(SaitoHost saito, CancellationToken token)
    {
        // The warm-up must be committed before the hold, and a publish now waits while Saito prepares the schema:
        // wait for it first, so the warm-up's own deadline is spent on the commit alone.
        await saito.Services.GetRequiredService<StorageStartup>().Ready.WaitAsync(TimeSpan.FromSeconds(60), token);
        await using (var warm = await RawMqttConnection.OpenAsync(saito.Endpoint, token))
        {
            await warm.ConnectAsync(MqttProtocolVersion.V500, "warm-" + Guid.NewGuid().ToString("N")[..8]);
            await warm.SendAsync(new PublishPacket { Topic = "saito/hub-1/warm/biosensor", Payload = Encoding.UTF8.GetBytes("{\"hr\":60}"), QoS = MqttQoS.AtLeastOnce, PacketId = 1 });
            (await warm.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe(MqttReasonCode.Success);
        }

        return await HoldFileAsync(saito.HotDatabase, token);
    }

    /// <summary>Holds the SQLite file at <paramref name="path"/> (created empty if absent), e.g. before Saito starts on it.</summary>
    public static async Task<HeldDatabase> HoldFileAsync(string path, CancellationToken token)
    {
        var connection = new SqliteConnection($"Data Source={path};Pooling=False");
        await connection.OpenAsync(token);
        await ExecuteAsync(connection, "BEGIN EXCLUSIVE", token);
        return new HeldDatabase(connection);
    }

    public Task ReleaseAsync(CancellationToken token) => ExecuteAsync(Connection, "ROLLBACK", token);

    private static async Task ExecuteAsync(SqliteConnection connection, string sql, CancellationToken token)
    {
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync(token);
    }

    public ValueTask DisposeAsync() => Connection.DisposeAsync();
}

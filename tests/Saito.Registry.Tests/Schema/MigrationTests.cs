using Microsoft.EntityFrameworkCore;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Registry.Tests.Infrastructure;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Schema;

/// <summary>The registry's migrations from an empty database, on SQLite and on a real PostgreSQL.</summary>
public sealed class MigrationTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Migrations_apply_to_an_empty_database_once_and_then_find_nothing_pending(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateEmptyAsync(provider, postgres);
        await database.CreateStorageSchemaAsync();

        var applied = await RegistryMigrator.MigrateAsync(database.Contexts, Ct);
        var again = await RegistryMigrator.MigrateAsync(database.Contexts, Ct);

        applied.ShouldNotBeEmpty();
        again.ShouldBeEmpty();
        await using var db = database.Open();
        (await db.Database.GetAppliedMigrationsAsync(Ct)).ShouldBe(applied);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_device_ingestion_registered_is_in_the_registry_and_an_assignment_round_trips_its_times(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        int deviceId = await database.RegisterDeviceAsync("WB-0001");
        var from = new DateTimeOffset(2026, 3, 29, 0, 30, 0, 123, TimeSpan.FromHours(1)).AddTicks(4560);

        await using (var db = database.Open())
        {
            var owner = new Owner { DisplayName = "Student A", Kind = OwnerKind.Student, CreatedAt = from, UpdatedAt = from };
            db.Owners.Add(owner);
            await db.SaveChangesAsync(Ct);
            db.Assignments.Add(new Assignment { DeviceId = deviceId, OwnerId = owner.Id, From = from, AssignedBy = "test" });
            await db.SaveChangesAsync(Ct);
        }

        await using (var db = database.Open())
        {
            var device = await db.Devices.Include(d => d.Assignments).SingleAsync(d => d.Serial == "WB-0001", Ct);
            device.Id.ShouldBe(deviceId);
            device.RetiredAt.ShouldBeNull();
            device.Assignments.Single().From.ShouldBe(from); // the same instant, to the microsecond
            device.Assignments.Single().From.Offset.ShouldBe(TimeSpan.Zero);
            (await db.Assignments.CountAsync(a => a.From >= from.AddTicks(-10) && a.From < from.AddTicks(10), Ct)).ShouldBe(1);
        }
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_device_has_at_most_one_open_assignment(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        int deviceId = await database.RegisterDeviceAsync("WB-0002");
        var now = DateTimeOffset.UtcNow;
        await using var db = database.Open();
        var a = new Owner { DisplayName = "A", CreatedAt = now, UpdatedAt = now };
        var b = new Owner { DisplayName = "B", CreatedAt = now, UpdatedAt = now };
        db.Owners.AddRange(a, b);
        await db.SaveChangesAsync(Ct);
        db.Assignments.Add(new Assignment { DeviceId = deviceId, OwnerId = a.Id, From = now.AddHours(-2), To = now.AddHours(-1), AssignedBy = "test" });
        db.Assignments.Add(new Assignment { DeviceId = deviceId, OwnerId = a.Id, From = now.AddHours(-1), AssignedBy = "test" });
        await db.SaveChangesAsync(Ct);

        db.Assignments.Add(new Assignment { DeviceId = deviceId, OwnerId = b.Id, From = now, AssignedBy = "test" });

        await Should.ThrowAsync<DbUpdateException>(() => db.SaveChangesAsync(Ct));
    }
}

using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Storage.ValueConversion;

namespace Saito.Registry.Data;

/// <summary>
/// SQLite: every time is INTEGER microseconds since 1970-01-01 UTC, as in the reading tables, so times compare and
/// sort in SQL (EF Core's SQLite provider cannot order or compare DateTimeOffset stored as text).
/// </summary>
public sealed class SqliteRegistryDbContext(DbContextOptions<SqliteRegistryDbContext> options) : RegistryDbContext(options)
{
    protected override string OpenAssignmentFilter => "\"assigned_to\" IS NULL";

    protected override void ConfigureConventions(ModelConfigurationBuilder configurationBuilder)
    {
        base.ConfigureConventions(configurationBuilder);
        configurationBuilder.Properties<DateTimeOffset>().HaveConversion<UnixMicrosecondsConverter>();
    }
}

/// <summary>PostgreSQL: <c>timestamptz</c>; times are stored in UTC (Npgsql writes only offset zero).</summary>
public sealed class PostgresRegistryDbContext(DbContextOptions<PostgresRegistryDbContext> options) : RegistryDbContext(options)
{
    protected override string OpenAssignmentFilter => "\"assigned_to\" IS NULL";

    protected override void ConfigureConventions(ModelConfigurationBuilder configurationBuilder)
    {
        base.ConfigureConventions(configurationBuilder);
        configurationBuilder.Properties<DateTimeOffset>().HaveConversion<ToUtcConverter>();
    }
}

/// <summary>SQL Server: <c>datetime2(6)</c> in UTC, like the device and reading tables.</summary>
public sealed class SqlServerRegistryDbContext(DbContextOptions<SqlServerRegistryDbContext> options) : RegistryDbContext(options)
{
    protected override string OpenAssignmentFilter => "[assigned_to] IS NULL";

    protected override void ConfigureConventions(ModelConfigurationBuilder configurationBuilder)
    {
        base.ConfigureConventions(configurationBuilder);
        configurationBuilder.Properties<DateTimeOffset>().HaveConversion<UtcDateTimeConverter>().HaveColumnType("datetime2(6)");
    }
}

/// <summary>DateTimeOffset to microseconds since the Unix epoch (UTC) and back.</summary>
public sealed class UnixMicrosecondsConverter() : ValueConverter<DateTimeOffset, long>(
    v => (v.UtcTicks - DateTimeOffset.UnixEpoch.UtcTicks) / TimeSpan.TicksPerMicrosecond,
    v => new DateTimeOffset(DateTimeOffset.UnixEpoch.UtcTicks + (v * TimeSpan.TicksPerMicrosecond), TimeSpan.Zero));

/// <summary>DateTimeOffset normalised to offset zero.</summary>
public sealed class ToUtcConverter() : ValueConverter<DateTimeOffset, DateTimeOffset>(v => v.ToUniversalTime(), v => v.ToUniversalTime());

/// <summary>DateTimeOffset to a UTC DateTime (datetime2) and back.</summary>
public sealed class UtcDateTimeConverter() : ValueConverter<DateTimeOffset, DateTime>(
    v => v.UtcDateTime,
    v => new DateTimeOffset(DateTime.SpecifyKind(v, DateTimeKind.Utc)));

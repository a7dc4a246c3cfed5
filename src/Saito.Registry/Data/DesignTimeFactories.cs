using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Design;

namespace Saito.Registry.Data;

// dotnet-ef builds each context through these to add migrations and write scripts; no database is opened.
// A new migration, for every provider (see docs/registry.md):
//   dotnet ef migrations add NAME -p src/Saito.Registry -c SqliteRegistryDbContext -o Migrations/Sqlite
//   dotnet ef migrations add NAME -p src/Saito.Registry -c PostgresRegistryDbContext -o Migrations/Postgres
//   dotnet ef migrations add NAME -p src/Saito.Registry -c SqlServerRegistryDbContext -o Migrations/SqlServer

internal sealed class SqliteDesignTimeFactory : IDesignTimeDbContextFactory<SqliteRegistryDbContext>
{
    public SqliteRegistryDbContext CreateDbContext(string[] args) =>
        new(new DbContextOptionsBuilder<SqliteRegistryDbContext>().UseSqlite("Data Source=design-time.db").Options);
}

internal sealed class PostgresDesignTimeFactory : IDesignTimeDbContextFactory<PostgresRegistryDbContext>
{
    public PostgresRegistryDbContext CreateDbContext(string[] args) =>
        new(new DbContextOptionsBuilder<PostgresRegistryDbContext>().UseNpgsql("Host=localhost").Options);
}

internal sealed class SqlServerDesignTimeFactory : IDesignTimeDbContextFactory<SqlServerRegistryDbContext>
{
    public SqlServerRegistryDbContext CreateDbContext(string[] args) =>
        new(new DbContextOptionsBuilder<SqlServerRegistryDbContext>().UseSqlServer("Server=localhost;Encrypt=false").Options);
}

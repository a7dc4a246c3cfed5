using Microsoft.Data.SqlClient;
using Npgsql;
using Saito.Storage.Keys;

namespace Saito.Storage.Tests.Paths;

/// <summary>Every pool the server opens to PostgreSQL or SQL Server has an explicit maximum, and together they make the documented bound.</summary>
public sealed class ConnectionBudgetTests
{
    [Fact]
    public void With_the_defaults_saito_holds_at_most_writers_plus_five_connections()
    {
        var options = new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = "Host=db;Database=saito" };

        ConnectionBudget.PoolSize(options, ConnectionPool.Writes).ShouldBe(5, "4 writers and the registrar");
        ConnectionBudget.PoolSize(options, ConnectionPool.Queries).ShouldBe(2);
        ConnectionBudget.PoolSize(options, ConnectionPool.Registry).ShouldBe(2);
        ConnectionBudget.Maximum(options).ShouldBe(9);
        ConnectionBudget.Maximum(new StorageOptions { Provider = StorageProvider.Postgres, Writers = 16, QueryConnections = 3 }).ShouldBe(16 + 1 + 6);
    }

    [Fact]
    public void A_pool_size_in_the_connection_string_is_replaced_and_the_application_name_says_which_pool()
    {
        var options = Options(StorageProvider.Postgres, "Host=db;Database=saito;Maximum Pool Size=500;Minimum Pool Size=50", writers: 2);
        options.CommandTimeoutSeconds = 7;

        var writes = new NpgsqlConnectionStringBuilder(ConnectionBudget.ConnectionString(options, ConnectionPool.Writes));
        var registry = new NpgsqlConnectionStringBuilder(ConnectionBudget.ConnectionString(options, ConnectionPool.Registry));

        (writes.MaxPoolSize, writes.MinPoolSize, writes.ApplicationName, writes.CommandTimeout).ShouldBe((3, 3, "saito", 7));
        (registry.MaxPoolSize, registry.ApplicationName).ShouldBe((2, "saito-registry"));
        ConnectionBudget.Postgres(options, ConnectionPool.Queries).ApplicationName.ShouldBe("saito-queries");
    }

    [Fact]
    public void Sql_server_pools_differ_by_name_so_sqlclient_keeps_them_apart()
    {
        var options = Options(StorageProvider.SqlServer, "Server=db;Database=saito;Application Name=school;Max Pool Size=200", writers: 1);

        var pools = Enum.GetValues<ConnectionPool>().Select(p => new SqlConnectionStringBuilder(ConnectionBudget.ConnectionString(options, p))).ToList();

        pools.Select(p => p.MaxPoolSize).ShouldBe([2, 2, 2]);
        pools.Select(p => p.ApplicationName).ShouldBe(["school", "school-queries", "school-registry"]);
        pools.Select(p => p.ConnectionString).Distinct().Count().ShouldBe(3);
        ConnectionBudget.ConnectionString(new StorageOptions(), ConnectionPool.Writes).ShouldBeNull("SQLite holds files, not server connections");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(65)]
    public void Query_connections_outside_1_to_64_are_refused_at_start(int connections)
    {
        var result = new StorageOptionsValidator().Validate(null, new StorageOptions { QueryConnections = connections });

        result.Failed.ShouldBeTrue();
        result.FailureMessage.ShouldContain($"Storage:QueryConnections must be between 1 and 64 (was {connections}).");
    }

    private static StorageOptions Options(StorageProvider provider, string connectionString, int writers) =>
        new() { Provider = provider, ConnectionString = connectionString, Writers = writers };
}

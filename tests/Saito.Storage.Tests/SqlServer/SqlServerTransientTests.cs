using System.Net.Sockets;
using System.Reflection;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

public sealed class SqlServerTransientTests
{
    private static readonly SqlServerReadingStore Store = new(
        new StorageOptions { Provider = StorageProvider.SqlServer, ConnectionString = "Server=127.0.0.1,1;Database=saito;Connect Timeout=2;Encrypt=false" },
        NullLogger<SqlServerReadingStore>.Instance);

    [Theory]
    [InlineData(-2)]
    [InlineData(1205)]
    [InlineData(1222)]
    [InlineData(4060)]
    [InlineData(40197)]
    [InlineData(40501)]
    [InlineData(40613)]
    [InlineData(49918)]
    [InlineData(49919)]
    [InlineData(49920)]
    [InlineData(10928)]
    [InlineData(10929)]
    [InlineData(233)]
    [InlineData(64)]
    [InlineData(121)]
    [InlineData(10053)]
    [InlineData(10054)]
    [InlineData(10060)]
    public void Connection_lock_and_timeout_errors_are_transient(int number)
    {
        SqlServerErrors.TransientNumbers.ShouldContain(number);
        Store.IsTransient(SqlExceptions.Create(number)).ShouldBeTrue();
    }

    [Theory]
    [InlineData(2627)] // primary key violation
    [InlineData(2601)] // unique index violation
    [InlineData(515)]  // NULL into a NOT NULL column
    [InlineData(547)]  // foreign key or check constraint
    [InlineData(208)]  // invalid object name (missing table)
    [InlineData(102)]  // syntax
    [InlineData(229)]  // permission denied
    [InlineData(18456)] // login failed
    [InlineData(8152)] // string or binary data would be truncated
    public void Errors_that_fail_again_the_same_way_are_not(int number)
    {
        SqlServerErrors.TransientNumbers.ShouldNotContain(number);
        Store.IsTransient(SqlExceptions.Create(number)).ShouldBeFalse();
    }

    [Fact]
    public void Every_error_of_the_exception_counts_not_only_the_first()
    {
        var exception = SqlExceptions.Create((3621, 16), (1205, 13));

        exception.Number.ShouldBe(3621);
        Store.IsTransient(exception).ShouldBeTrue();
    }

    [Fact]
    public void A_broken_connection_without_a_server_error_number_is_transient()
    {
        // How SqlClient on Linux reports a refused or reset TCP connection: number 0, class 20.
        Store.IsTransient(SqlExceptions.Create((0, 20))).ShouldBeTrue();
        Store.IsTransient(SqlExceptions.Create((0, 16))).ShouldBeFalse();
    }

    [Fact]
    public async Task A_real_refused_connection_is_reported_that_way_by_this_SqlClient_and_is_transient()
    {
        // Nothing listens on a port just freed: the check that the SqlClient in use (7.1) still reports it as above.
        // The refusal comes at once, but SqlClient keeps trying until the connect timeout and then reports the refusal:
        // 5 s keeps the test short and is still far longer than a refused loopback connect takes on a busy machine.
        int port;
        using (var listener = new TcpListener(System.Net.IPAddress.Loopback, 0))
        {
            listener.Start();
            port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        }

        await using var connection = new SqlConnection($"Server=tcp:127.0.0.1,{port};Database=saito;Connect Timeout=5;Encrypt=false;ConnectRetryCount=0");
        var refused = await Should.ThrowAsync<SqlException>(() => connection.OpenAsync(TestContext.Current.CancellationToken));

        refused.Number.ShouldBe(0, refused.Message);
        refused.Class.ShouldBe((byte)20, refused.Message);
        Store.IsTransient(refused).ShouldBeTrue();
    }

    [Fact]
    public void Unique_violations_are_recognised_for_the_registry_retry()
    {
        SqlServerErrors.IsUniqueViolation(SqlExceptions.Create(2627)).ShouldBeTrue();
        SqlServerErrors.IsUniqueViolation(SqlExceptions.Create(2601)).ShouldBeTrue();
        SqlServerErrors.IsUniqueViolation(SqlExceptions.Create(1205)).ShouldBeFalse();
    }

    [Fact]
    public void Timeouts_and_socket_and_IO_errors_are_transient_wherever_they_are_wrapped()
    {
        Store.IsTransient(new TimeoutException()).ShouldBeTrue();
        Store.IsTransient(new IOException("reset")).ShouldBeTrue();
        Store.IsTransient(new SocketException((int)SocketError.ConnectionReset)).ShouldBeTrue();
        Store.IsTransient(new InvalidOperationException("wrapped", new IOException("broken pipe"))).ShouldBeTrue();
        Store.IsTransient(new InvalidOperationException("outer", new InvalidOperationException("inner", new SocketException()))).ShouldBeTrue();
        Store.IsTransient(new InvalidOperationException("wrapped", SqlExceptions.Create(1205))).ShouldBeTrue();
    }

    [Fact]
    public void Programming_and_data_errors_are_not_transient()
    {
        Store.IsTransient(new InvalidOperationException("no")).ShouldBeFalse();
        Store.IsTransient(new ArgumentException("bad")).ShouldBeFalse();
        Store.IsTransient(new InvalidCastException()).ShouldBeFalse();
        Store.IsTransient(new FormatException()).ShouldBeFalse();
    }

    [Fact]
    public async Task Opening_a_connection_fails_transiently_when_nothing_listens_or_names_the_fix_in_invariant_mode()
    {
        // Microsoft.Data.SqlClient 6.1.5 at run time on this machine. Nothing listens on port 1. In globalization-invariant
        // mode (Directory.Build.props turns it on for every project) SqlClient refuses to connect at all; the store says
        // how to fix it, and that is not worth retrying.
        var error = await Should.ThrowAsync<Exception>(() => Store.PingAsync(TestContext.Current.CancellationToken));

        if (SqlServerReadingStore.GlobalizationInvariant.Value)
        {
            error.ShouldBeOfType<NotSupportedException>().Message.ShouldContain("<InvariantGlobalization>false</InvariantGlobalization>");
            Store.IsTransient(error).ShouldBeFalse();
        }
        else
        {
            var sql = error.ShouldBeOfType<SqlException>();
            Store.IsTransient(sql).ShouldBeTrue($"number {sql.Number}, class {sql.Class}: {sql.Message}");
        }
    }
}

/// <summary>
/// SqlException has no public constructor; these build one through SqlClient's internal factory, as the
/// driver's own tests do. If a SqlClient update moves the internals, this says so plainly.
/// </summary>
internal static class SqlExceptions
{
    public static SqlException Create(int number) => Create((number, (byte)16));

    public static SqlException Create(params (int Number, byte Class)[] errors)
    {
        var errorConstructor = typeof(SqlError).GetConstructors(BindingFlags.NonPublic | BindingFlags.Instance)
            .FirstOrDefault(c => c.GetParameters().Select(p => p.ParameterType).SequenceEqual(
                [typeof(int), typeof(byte), typeof(byte), typeof(string), typeof(string), typeof(string), typeof(int), typeof(Exception)]))
            ?? throw new InvalidOperationException("SqlError(int, byte, byte, string, string, string, int, Exception) is gone from this SqlClient version");
        var collection = (SqlErrorCollection)Activator.CreateInstance(typeof(SqlErrorCollection), nonPublic: true)!;
        var add = typeof(SqlErrorCollection).GetMethod("Add", BindingFlags.NonPublic | BindingFlags.Instance, [typeof(SqlError)])
            ?? throw new InvalidOperationException("SqlErrorCollection.Add(SqlError) is gone from this SqlClient version");
        foreach (var (number, errorClass) in errors)
        {
            var error = errorConstructor.Invoke([number, (byte)1, errorClass, "test-server", $"test error {number}", "test", 1, null]);
            add.Invoke(collection, [error]);
        }

        var create = typeof(SqlException).GetMethod("CreateException", BindingFlags.NonPublic | BindingFlags.Static, [typeof(SqlErrorCollection), typeof(string)])
            ?? throw new InvalidOperationException("SqlException.CreateException(SqlErrorCollection, string) is gone from this SqlClient version");
        return (SqlException)create.Invoke(null, [collection, "16.00.1000"])!;
    }
}

using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Saito.Ingestion.Pipeline;
using Saito.Storage;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// A database that cannot be prepared stops Saito and says why, whatever the exception: a driver that gives up with
/// a cancellation of its own (a command timeout surfaces as <see cref="TaskCanceledException"/>) is a failure, not a
/// quiet stop that would leave Saito running without tables.
/// </summary>
public sealed class StorageStartupFailureTests
{
    [Fact]
    public async Task A_schema_step_that_gives_up_with_its_own_cancellation_stops_Saito_and_health_names_the_reason()
    {
        var logs = new CapturedLog(LogLevel.Critical);
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var saito = await SaitoHost.StartAsync(new SaitoHostStart
        {
            WaitUntilServed = false,
            Configure = builder =>
            {
                builder.Logging.AddProvider(logs);
                builder.Services.AddSingleton<IStorageSchema>(sp => new HeldSchema(held.Task, sp.GetRequiredService<IReadingStore>()));
            },
        });
        var startup = saito.Services.GetRequiredService<StorageStartup>();
        var stopping = saito.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;

        held.SetException(new TaskCanceledException("the driver's command timed out"));

        await Should.ThrowAsync<TaskCanceledException>(() => startup.Ready.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken));
        startup.Ready.IsFaulted.ShouldBeTrue("a cancellation the stopping token did not ask for is a failure");
        await Eventually.TrueAsync(() => stopping.IsCancellationRequested, "the host stops");
        logs.Entries.ShouldContain(e => e.Category.EndsWith(nameof(StorageStartup), StringComparison.Ordinal) && e.Text.Contains(HeldSchema.Where, StringComparison.Ordinal));
    }

    [Fact]
    public async Task While_the_database_is_being_prepared_health_says_so_and_answers_503()
    {
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var saito = await SaitoHost.StartAsync(new SaitoHostStart
        {
            WaitUntilServed = false,
            Configure = builder => builder.Services.AddSingleton<IStorageSchema>(sp => new HeldSchema(held.Task, sp.GetRequiredService<IReadingStore>())),
        });

        string body = await saito.WaitForHealthAsync((code, text) => code == HttpStatusCode.ServiceUnavailable && text.Contains("preparing the database", StringComparison.Ordinal));
        body.ShouldContain("preparing the database");

        held.SetResult();
        await saito.WaitForHealthAsync((code, text) => code == HttpStatusCode.OK);
    }

    /// <summary>The real schema step, begun only once the test lets it.</summary>
    private sealed class HeldSchema(Task held, IStorageSchema real) : IStorageSchema
    {
        public const string Where = "the test's held database";

        public string Describe() => Where;

        public async Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken)
        {
            await held.WaitAsync(cancellationToken);
            return await real.EnsureSchemaAsync(cancellationToken);
        }
    }
}

using Microsoft.Extensions.Options;
using Saito.Ingestion;
using Saito.Ingestion.Hosting;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Server;

/// <summary>
/// Once Saito is listening, its database is ready and its broker serves connections, logs two command lines a newcomer
/// can paste: one that stores a reading, one that shows it stored.
/// </summary>
internal sealed partial class TryItReport(
    IHostApplicationLifetime lifetime, StorageStartup startup, IServiceProvider services, IOptions<StorageOptions> storage,
    IOptions<IngestionOptions> ingestion, DataLocation data, ILogger<TryItReport> logger) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        LogDataPath(data.DataPath);
        if (data.EarlierHotDatabase is { } earlier)
        {
            LogEarlierDatabase(earlier, data.HotPath);
        }

        // And once the broker serves connections (it lets the registry's start-up work finish first), so the pasted line is answered at once.
        lifetime.ApplicationStarted.Register(() => _ = Task.WhenAll(startup.Ready, services.GetService<MqttBroker>()?.Served ?? Task.CompletedTask).ContinueWith(
            ready =>
            {
                if (ready.IsCompletedSuccessfully)
                {
                    Report();
                }
            },
            CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default));
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    private void Report()
    {
        string topic = $"{ingestion.Value.TopicPrefix}/hub-1/wrist-17/biosensor";
        string payload = "{\"ts\":\"" + DateTime.UtcNow.ToString("yyyy-MM-ddTHH:mm:ss.fffZ", System.Globalization.CultureInfo.InvariantCulture) + "\",\"hr\":72,\"sys\":118,\"dia\":76,\"temp\":33.4}";
        if (services.GetService<MqttBroker>() is { } broker && broker.Options.Port > 0)
        {
            string host = broker.Options.BindAddress is "0.0.0.0" or "*" or "::" ? "localhost" : broker.Options.BindAddress;
            if (broker.Options.AllowAnonymous == false)
            {
                // Closed: the line needs a hub's credentials, which only 'saito hubs add' can print.
                LogTryAddHub("dotnet run --project src/Saito.Server -- hubs add hub-1");
                LogTryPublish($"mosquitto_pub -h {host} -p {broker.Options.Port} -u hub-1 -P '<its secret>' -q 1 -t {topic} -m '{payload}'");
            }
            else
            {
                LogTryPublish($"mosquitto_pub -h {host} -p {broker.Options.Port} -q 1 -t {topic} -m '{payload}'");
            }
        }
        else if (services.GetService<IOptions<ExternalBrokerOptions>>() is { } external)
        {
            LogTryPublish($"mosquitto_pub -h {external.Value.Host} -p {external.Value.Port} -q 1 -t {topic} -m '{payload}'");
        }

        // An absolute path: `dotnet run --project` starts Saito in the project folder, not where the user stands.
        var options = storage.Value;
        string table = ReadingTables.TableName(Saito.Readings.ReadingKind.Biosensor, options.KeyStrategy, StorageTier.Hot);
        string show = options.Provider switch
        {
            StorageProvider.Sqlite => $"sqlite3 {Path.GetFullPath(Path.Combine(options.HotPath, "saito-hot.db"))} \"SELECT * FROM v_biosensor ORDER BY ts DESC LIMIT 5\"",
            StorageProvider.Postgres => $"psql \"<Storage:ConnectionString>\" -c \"SELECT * FROM {table} ORDER BY ts DESC LIMIT 5\"",
            _ => $"sqlcmd -Q \"SELECT TOP 5 * FROM {table} ORDER BY ts DESC\"",
        };
        LogTryShow(show);
    }

    [LoggerMessage(5204, LogLevel.Information, "Saito keeps its files in {DataPath} unless a setting names another path (Storage:DataPath, Storage:HotPath, ...)")]
    private partial void LogDataPath(string dataPath);

    [LoggerMessage(5205, LogLevel.Warning, "A database from an earlier Saito is at {Earlier}, where Saito once kept its files by default (data/hot under the folder it ran in); " +
        "Saito now uses {HotPath}, which is empty. To keep those readings, stop Saito and move the data folder's contents there, or set --Storage:DataPath to that data folder.")]
    private partial void LogEarlierDatabase(string earlier, string hotPath);

    [LoggerMessage(5201, LogLevel.Information, "Store a reading: {Command}")]
    private partial void LogTryPublish(string command);

    [LoggerMessage(5203, LogLevel.Information, "Anonymous clients are refused (Mqtt:AllowAnonymous=false): add a hub first, it prints its secret once: {Command}")]
    private partial void LogTryAddHub(string command);

    [LoggerMessage(5202, LogLevel.Information, "See it stored: {Command}")]
    private partial void LogTryShow(string command);
}

/// <summary>Where Saito's files are, as configured at start (<see cref="DataPaths"/>).</summary>
internal sealed record DataLocation(string DataPath, string HotPath, string? EarlierHotDatabase)
{
    public static DataLocation Of(IConfiguration configuration)
    {
        string data = DataPaths.Resolve(configuration[DataPaths.Key]);
        string hot = Path.GetFullPath(configuration[$"{StorageOptions.SectionName}:{nameof(StorageOptions.HotPath)}"] ?? Path.Combine(data, "hot"));
        bool sqlite = !Enum.TryParse<StorageProvider>(configuration[$"{StorageOptions.SectionName}:{nameof(StorageOptions.Provider)}"], ignoreCase: true, out var provider) ||
            provider == StorageProvider.Sqlite;
        return new DataLocation(data, hot, sqlite ? DataPaths.EarlierHotDatabase(hot, Environment.CurrentDirectory) : null);
    }
}

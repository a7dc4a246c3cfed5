using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Payloads;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Hosting;
using Saito.Storage;
using Saito.Readings.Configuration;
using Saito.Storage.Queries;

namespace Saito.Ingestion.Hosting;

public static class IngestionHostingExtensions
{
    /// <summary>The ingestion mode <c>Mqtt:Mode</c> names (embedded when unset); an unknown value gives -1, refused at start.</summary>
    public static MqttMode GetMqttMode(this IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        return configuration["Mqtt:Mode"] is { Length: > 0 } mode ? KebabCaseEnum.Parse<MqttMode>(mode) : MqttMode.Embedded;
    }

    /// <summary>
    /// Registers the ingestion pipeline: options (<c>Storage</c>, <c>Ingestion</c>, and <c>Mqtt:External</c> in
    /// external mode; validated at start), the store <c>Storage:Provider</c> names (one instance, registered whole and
    /// under each of its roles), the device registry, the start-up step (<see cref="StorageStartup"/>: schema, then
    /// devices; the registry's <see cref="IStorageReady"/> and a start gate of the embedded broker), the writer pool, and
    /// either the embedded broker's publish hook or the external broker consumer. Call it before
    /// <c>AddSaitoMqttBroker</c>, so that on shutdown the broker stops taking messages before the writers drain.
    /// </summary>
    public static IHostApplicationBuilder AddSaitoIngestion(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        services.AddOptions<StorageOptions>().BindConfiguration(StorageOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<StorageOptions>, StorageOptionsValidator>();
        services.AddOptions<IngestionOptions>().BindConfiguration(IngestionOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<IngestionOptions>, IngestionOptionsValidator>();

        services.TryAddSingleton(TimeProvider.System);
        services.AddMetrics();
        services.AddSingleton<IngestionMetrics>();
        services.AddSingleton<IReadingStore>(sp => ReadingStores.Create(sp.GetRequiredService<IOptions<StorageOptions>>().Value, sp.GetRequiredService<ILoggerFactory>()));
        services.AddSingleton<IStorageSchema>(sp => sp.GetRequiredService<IReadingStore>());
        services.AddSingleton<IDeviceTable>(sp => sp.GetRequiredService<IReadingStore>());
        services.AddSingleton<IReadingWriter>(sp => sp.GetRequiredService<IReadingStore>());
        services.AddSingleton<IReadingQueries>(sp => sp.GetRequiredService<IReadingStore>());
        services.AddSingleton<StorageHealth>();
        services.AddSingleton<StorageResilience>();
        services.AddSingleton<NewDeviceLimiter>();
        services.AddOptions<DiskSpaceOptions>().BindConfiguration(DiskSpaceOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<DiskSpaceOptions>, DiskSpaceOptionsValidator>();
        services.AddSingleton<DiskSpaceGuard>();
        services.AddSingleton<DeviceHubs>();
        services.AddSingleton<DeviceRegistry>();
        services.AddSingleton<HubSiteRules>();
        services.AddSingleton(sp => new ReadingParser(sp.GetRequiredService<IOptions<IngestionOptions>>().Value, sp.GetRequiredService<TimeProvider>()));
        services.AddSingleton<StorageStartup>();
        services.AddSingleton<IStorageReady>(sp => sp.GetRequiredService<StorageStartup>());
        services.AddHostedService(sp => sp.GetRequiredService<StorageStartup>());
        services.AddSingleton<ReadingWriterPool>();
        services.AddHostedService(sp => sp.GetRequiredService<ReadingWriterPool>());
        services.AddSingleton<DeviceActivity>();
        services.AddHostedService(sp => sp.GetRequiredService<DeviceActivity>());
        services.AddSingleton<MessageIngestor>();
        services.AddSingleton<DatabasePing>();
        services.AddHealthChecks().AddCheck<IngestionHealthCheck>("storage", timeout: IngestionHealthCheck.Deadline);

        var mode = builder.Configuration.GetMqttMode();
        services.AddOptions<MqttModeOptions>().Configure(o => o.Mode = mode).ValidateOnStart();
        services.AddSingleton<IValidateOptions<MqttModeOptions>, MqttModeOptionsValidator>();
        if (mode == MqttMode.External)
        {
            services.AddOptions<ExternalBrokerOptions>().BindConfiguration(ExternalBrokerOptions.SectionName).ValidateOnStart();
            services.AddSingleton<IValidateOptions<ExternalBrokerOptions>, ExternalBrokerOptionsValidator>();
            services.AddSingleton<ExternalBrokerConsumer>();
            services.AddHostedService(sp => sp.GetRequiredService<ExternalBrokerConsumer>());
        }
        else
        {
            services.AddSingleton<IMqttPublishHook, IngestionPublishHook>();
            services.AddSingleton<IMqttStartGate>(sp => sp.GetRequiredService<StorageStartup>());
        }

        return builder;
    }
}

/// <summary><c>Mqtt:Mode</c>, checked at start with the other settings.</summary>
public sealed class MqttModeOptions
{
    public MqttMode Mode { get; set; }
}

internal sealed class MqttModeOptionsValidator : IValidateOptions<MqttModeOptions>
{
    public ValidateOptionsResult Validate(string? name, MqttModeOptions options) =>
        Enum.IsDefined(options.Mode)
            ? ValidateOptionsResult.Success
            : ValidateOptionsResult.Fail("Mqtt:Mode must be embedded (Saito's own broker) or external (a client of Mqtt:External:Host).");
}

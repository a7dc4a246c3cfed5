using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Hosting;
using Saito.Payloads;
using Saito.Registry.CheckIns;
using Saito.Registry.Hosting;

namespace Saito.Server.Registry;

/// <summary>Check-ins from fingerprint readers (MQTT) into the registry; committed before the message is acknowledged.</summary>
internal sealed class RegistryCheckInRecorder(CheckInService checkIns, RegistryMigrator migrator, Dashboard.LiveSignal live) : ICheckInRecorder
{
    public async Task<CheckInRecording> RecordAsync(string readerSerial, CheckInMessage checkIn, CancellationToken cancellationToken)
    {
        if (!await migrator.WaitReadyAsync(cancellationToken))
        {
            return CheckInRecording.Unavailable;
        }

        var result = await checkIns.RecordFromReaderAsync(readerSerial, checkIn.OwnerId, checkIn.At, checkIn.CheckOut, cancellationToken);
        live.RegistryChanged();
        return result.Outcome switch
        {
            CheckInOutcome.UnknownOwner => CheckInRecording.UnknownOwner,
            CheckInOutcome.OutsideReaderWindow => CheckInRecording.OutsideWindow,
            CheckInOutcome.NotCheckedIn => CheckInRecording.NotCheckedIn,
            _ => CheckInRecording.Done,
        };
    }
}

internal static class RegistryGlueExtensions
{
    /// <summary>
    /// The registry, joined to ingestion: it migrates after the storage start-up step (the <c>IStorageReady</c>
    /// <c>AddSaitoIngestion</c> registers), takes the readers' check-ins, and the broker serves its first connections
    /// once it is migrated.
    /// </summary>
    public static IHostApplicationBuilder AddSaitoRegistryGlue(this IHostApplicationBuilder builder)
    {
        builder.AddSaitoRegistry();
        builder.Services.AddSingleton<ICheckInRecorder, RegistryCheckInRecorder>();
        builder.Services.AddSingleton<IMqttStartGate, RegistryStartGate>();
        return builder;
    }
}

/// <summary>
/// The broker serves its first connections once the registry's migrations are done, or have failed (ingestion does
/// not need the registry). On a fresh start they built Entity Framework's model and the registry's tables beside the
/// first clients: on two cores that cost a QoS 1 subscriber 2 % of its messages in the first seconds
/// (benchmarks/results/HISTORY.md, "Start-up work beside the first clients").
/// </summary>
internal sealed class RegistryStartGate(RegistryMigrator migrator) : IMqttStartGate
{
    public string Name => "registry migrations";

    // Done either way: a failed migration is logged by the migrator, and MQTT goes on without the registry.
    public Task WaitAsync(CancellationToken cancellationToken) => Task.WhenAny(migrator.Ready).WaitAsync(cancellationToken);
}

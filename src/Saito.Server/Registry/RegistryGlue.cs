using Saito.Ingestion.Pipeline;
using Saito.Payloads;
using Saito.Registry.CheckIns;
using Saito.Registry.Hosting;

namespace Saito.Server.Registry;

/// <summary>The registry migrates once the writer pool has made the storage schema (the device table it references).</summary>
internal sealed class WriterPoolStorageReady(ReadingWriterPool writers) : IStorageReady
{
    public Task WaitAsync(CancellationToken cancellationToken) => writers.Ready.WaitAsync(cancellationToken);
}

/// <summary>Check-ins from fingerprint readers (MQTT) into the registry; committed before the message is acknowledged.</summary>
internal sealed class RegistryCheckInRecorder(CheckInService checkIns, RegistryMigrator migrator, Dashboard.LiveSignal live) : ICheckInRecorder
{
    public async Task<CheckInRecording> RecordAsync(string readerSerial, int readerDeviceId, CheckInMessage checkIn, CancellationToken cancellationToken)
    {
        try
        {
            await migrator.Ready.WaitAsync(cancellationToken);
        }
        catch (Exception) when (migrator.Ready.IsFaulted)
        {
            return CheckInRecording.Unavailable;
        }

        string source = "reader:" + readerSerial;
        var result = checkIn.CheckOut
            ? await checkIns.CheckOutAsync(checkIn.OwnerId, checkIn.At, cancellationToken)
            : await checkIns.CheckInAsync(checkIn.OwnerId, checkIn.At, source, cancellationToken);
        live.RegistryChanged();
        return result.Outcome == CheckInOutcome.UnknownOwner ? CheckInRecording.UnknownOwner : CheckInRecording.Done;
    }
}

internal static class RegistryGlueExtensions
{
    /// <summary>The registry, joined to ingestion: it waits for the storage schema, and takes the readers' check-ins.</summary>
    public static IHostApplicationBuilder AddSaitoRegistryGlue(this IHostApplicationBuilder builder)
    {
        builder.AddSaitoRegistry();
        builder.Services.AddSingleton<IStorageReady, WriterPoolStorageReady>();
        builder.Services.AddSingleton<ICheckInRecorder, RegistryCheckInRecorder>();
        return builder;
    }
}

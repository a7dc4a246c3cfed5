namespace Saito.Mqtt.Hosting;

/// <summary>
/// Start-up work the broker lets finish before it serves its first connections (Saito's server registers the
/// registry's migrations: run beside the first clients of a fresh start, they cost the broker its first seconds). The
/// listeners bind at start as before, so a taken port still fails it; a client that connects meanwhile is accepted and
/// answered once every gate has opened, or once <c>Mqtt:StartupWaitSeconds</c> have passed.
/// </summary>
public interface IMqttStartGate
{
    /// <summary>What the broker waits for, as its log names it.</summary>
    string Name { get; }

    /// <summary>Completes when the work is done, whether it succeeded or not.</summary>
    Task WaitAsync(CancellationToken cancellationToken);
}

using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>The broker behaviour tests against Saito's own broker: the same tests Mosquitto passes.</summary>
[Collection(SaitoCollection.Name)]
public sealed class BrokerConformanceAgainstSaito(SaitoBrokerFixture saito, SizeLimitedSaitoFixture sizeLimited)
    : BrokerConformanceTests(saito.Endpoint), IClassFixture<SizeLimitedSaitoFixture>
{
    protected override SizeLimitedBroker? BrokerWithMaximumPacketSize =>
        new(sizeLimited.Endpoint, SizeLimitedSaitoFixture.MaximumPacketSize);
}

/// <summary>A second Saito with a small Mqtt:MaxPacketSize, for the oversize-packet test.</summary>
public sealed class SizeLimitedSaitoFixture : IAsyncLifetime
{
    public const int MaximumPacketSize = 4096;

    private SaitoHost? _instance;

    public BrokerEndpoint Endpoint => (_instance ?? throw new InvalidOperationException("Saito not started")).Endpoint;

    public async ValueTask InitializeAsync() => _instance = await SaitoHost.StartAsync([$"Mqtt:MaxPacketSize={MaximumPacketSize}"]);

    public async ValueTask DisposeAsync()
    {
        if (_instance is not null)
        {
            await _instance.DisposeAsync();
        }
    }
}

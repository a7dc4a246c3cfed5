namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>One Saito broker shared by every test in the "saito" collection.</summary>
public sealed class SaitoBrokerFixture : IAsyncLifetime
{
    private SaitoHost? _instance;

    public SaitoHost Instance => _instance ?? throw new InvalidOperationException("Saito not started");

    public BrokerEndpoint Endpoint => Instance.Endpoint;

    // The conformance suites send a 1 MB payload; Saito's default packet limit is sized for readings (260 KiB).
    public async ValueTask InitializeAsync() => _instance = await SaitoHost.StartAsync(["Mqtt:MaxPacketSize=16777216"]);

    public async ValueTask DisposeAsync()
    {
        if (_instance is not null)
        {
            await _instance.DisposeAsync();
        }
    }
}

[CollectionDefinition(Name)]
public sealed class SaitoCollection : ICollectionFixture<SaitoBrokerFixture>
{
    public const string Name = "saito";
}

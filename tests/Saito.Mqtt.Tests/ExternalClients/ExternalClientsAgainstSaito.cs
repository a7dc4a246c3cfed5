using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.ExternalClients;

/// <summary>The same independent clients (mosquitto_pub/sub, paho-mqtt, MQTT.js) against Saito's broker.</summary>
[Collection(SaitoCollection.Name)]
public sealed class ExternalClientsAgainstSaito(SaitoBrokerFixture saito) : ExternalClientConformanceTests
{
    protected override BrokerEndpoint Endpoint => saito.Endpoint;
}

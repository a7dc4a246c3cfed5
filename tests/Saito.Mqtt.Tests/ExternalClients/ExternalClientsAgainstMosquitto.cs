using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.ExternalClients;

/// <summary>The external-client conformance tests against Mosquitto, the reference broker.</summary>
[Collection(MosquittoCollection.Name)]
public sealed class ExternalClientsAgainstMosquitto(MosquittoFixture mosquitto) : ExternalClientConformanceTests
{
    protected override BrokerEndpoint Endpoint => mosquitto.Endpoint;
}

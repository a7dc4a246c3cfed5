namespace Saito.Testing;

/// <summary>
/// Where a broker under test listens. Behaviour tests take one of these so the same test runs
/// against Mosquitto (the reference) and against Saito's broker.
/// </summary>
/// <param name="Name">"mosquitto" or "saito", for test output.</param>
/// <param name="Host">Always a loopback address.</param>
/// <param name="Port">Plain MQTT over TCP.</param>
/// <param name="TlsPort">MQTT over TLS, with a server certificate signed by <paramref name="CaCertificatePath"/>.</param>
/// <param name="CaCertificatePath">PEM file of the test CA.</param>
/// <param name="WebSocketUrl">ws://…/mqtt, or null when the broker has no WebSocket listener.</param>
public sealed record BrokerEndpoint(string Name, string Host, int Port, int? TlsPort, string? CaCertificatePath, string? WebSocketUrl)
{
    public override string ToString() => Name;
}

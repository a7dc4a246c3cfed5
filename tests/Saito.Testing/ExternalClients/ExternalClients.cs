namespace Saito.Testing;

/// <summary>
/// Every external client variant, by name, so theory data can stay plain strings
/// ("paho 5.0", "MQTT.js 3.1.1 over WebSocket") and read well in test output.
/// </summary>
public static class ExternalClients
{
    public static ExternalMqttClient Mosquitto311 { get; } = new MosquittoCliClient(MqttVersion.V311, MqttTransport.Tcp);
    public static ExternalMqttClient Mosquitto5 { get; } = new MosquittoCliClient(MqttVersion.V500, MqttTransport.Tcp);
    public static ExternalMqttClient Mosquitto311Tls { get; } = new MosquittoCliClient(MqttVersion.V311, MqttTransport.Tls);
    public static ExternalMqttClient Mosquitto5Tls { get; } = new MosquittoCliClient(MqttVersion.V500, MqttTransport.Tls);

    public static ExternalMqttClient Paho311 { get; } = new PahoClient(MqttVersion.V311, MqttTransport.Tcp);
    public static ExternalMqttClient Paho5 { get; } = new PahoClient(MqttVersion.V500, MqttTransport.Tcp);
    public static ExternalMqttClient Paho311Tls { get; } = new PahoClient(MqttVersion.V311, MqttTransport.Tls);
    public static ExternalMqttClient Paho5Tls { get; } = new PahoClient(MqttVersion.V500, MqttTransport.Tls);

    public static ExternalMqttClient MqttJs311 { get; } = new MqttJsClient(MqttVersion.V311, MqttTransport.Tcp);
    public static ExternalMqttClient MqttJs5 { get; } = new MqttJsClient(MqttVersion.V500, MqttTransport.Tcp);
    public static ExternalMqttClient MqttJs311Tls { get; } = new MqttJsClient(MqttVersion.V311, MqttTransport.Tls);
    public static ExternalMqttClient MqttJs5Tls { get; } = new MqttJsClient(MqttVersion.V500, MqttTransport.Tls);
    public static ExternalMqttClient MqttJs311Ws { get; } = new MqttJsClient(MqttVersion.V311, MqttTransport.WebSocket);
    public static ExternalMqttClient MqttJs5Ws { get; } = new MqttJsClient(MqttVersion.V500, MqttTransport.WebSocket);

    public static IReadOnlyList<ExternalMqttClient> All { get; } =
    [
        Mosquitto311, Mosquitto5, Mosquitto311Tls, Mosquitto5Tls,
        Paho311, Paho5, Paho311Tls, Paho5Tls,
        MqttJs311, MqttJs5, MqttJs311Tls, MqttJs5Tls, MqttJs311Ws, MqttJs5Ws,
    ];

    public static ExternalMqttClient Named(string name) =>
        All.FirstOrDefault(c => c.Name == name)
        ?? throw new ArgumentException($"No external client named '{name}'. Known: {string.Join(", ", All.Select(c => c.Name))}", nameof(name));
}

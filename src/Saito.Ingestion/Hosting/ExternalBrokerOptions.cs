using System.Net;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Packets;

namespace Saito.Ingestion.Hosting;

/// <summary>How Saito takes in MQTT: <c>Mqtt:Mode</c>.</summary>
public enum MqttMode
{
    /// <summary>Saito's own broker (the default): hubs connect to Saito.</summary>
    Embedded,

    /// <summary>Saito is a client of an external broker (Mosquitto, EMQX), sharing the stream with other Saito instances.</summary>
    External,
}

/// <summary>The <c>Mqtt:External</c> section: the broker Saito subscribes to when <c>Mqtt:Mode</c> is <c>external</c>.</summary>
public sealed class ExternalBrokerOptions
{
    public const string SectionName = "Mqtt:External";

    public string Host { get; set; } = "localhost";

    public int Port { get; set; } = 1883;

    /// <summary>3.1.1 or 5.0 (default).</summary>
    public string ProtocolVersion { get; set; } = "5.0";

    public string? UserName { get; set; }

    public string? Password { get; set; }

    public bool Tls { get; set; }

    /// <summary>
    /// Lets Saito send <see cref="UserName"/> and <see cref="Password"/> to a broker that is not on this machine
    /// with <see cref="Tls"/> off, where anyone on the network path can read them. Off by default: such a setting
    /// stops Saito at start unless this says it is meant (a lab network, a broker behind a TLS-terminating tunnel).
    /// </summary>
    public bool AllowCredentialsWithoutTls { get; set; }

    /// <summary>CA certificate (PEM) that signed the broker's certificate; unset means the system's trust store.</summary>
    public string? CaCertificatePath { get; set; }

    /// <summary>Client id; unset means <c>saito-{machine name}</c>. Each Saito instance needs its own.</summary>
    public string? ClientId { get; set; }

    /// <summary>
    /// Shared-subscription group: instances with the same group split the stream between them
    /// (<c>$share/{group}/saito/+/+/+</c>). Empty subscribes without sharing (every instance gets everything).
    /// </summary>
    public string SharedGroup { get; set; } = "saito";

    /// <summary>QoS of the subscription: 1 (default) or 2. Readings are idempotent, so 1 loses nothing.</summary>
    public int QoS { get; set; } = 1;

    /// <summary>How long the broker keeps Saito's session (and queues for it) while Saito is away.</summary>
    public int SessionExpirySeconds { get; set; } = 3600;

    /// <summary>Messages the broker may send before Saito acknowledges: the commit pipeline's depth.</summary>
    public int ReceiveMaximum { get; set; } = 1000;

    public int KeepAliveSeconds { get; set; } = 30;

    /// <summary>A user name or password is set: something a listener on the network could take.</summary>
    public bool HasCredentials => !string.IsNullOrEmpty(UserName) || !string.IsNullOrEmpty(Password);

    /// <summary>
    /// The credentials would cross a network in clear: they are set, TLS is off and the broker is not on this
    /// machine. Refused at start unless <see cref="AllowCredentialsWithoutTls"/>.
    /// </summary>
    public bool SendsCredentialsInClear => HasCredentials && !Tls && !IsLoopbackHost(Host);

    /// <summary>
    /// <c>localhost</c> or a loopback address (<c>127.0.0.0/8</c>, <c>::1</c>): traffic that never leaves the machine.
    /// Any other name counts as remote, even one that happens to resolve to a loopback address: what a name resolves
    /// to can change after start.
    /// </summary>
    public static bool IsLoopbackHost(string? host) =>
        host is { Length: > 0 }
        && (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
            || (IPAddress.TryParse(host.Trim('[', ']'), out var address) && IPAddress.IsLoopback(address)));

    public MqttProtocolVersion ParsedProtocolVersion => ProtocolVersion switch
    {
        "3.1.1" or "311" or "4" => MqttProtocolVersion.V311,
        _ => MqttProtocolVersion.V500,
    };
}

public sealed class ExternalBrokerOptionsValidator : IValidateOptions<ExternalBrokerOptions>
{
    public ValidateOptionsResult Validate(string? name, ExternalBrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (string.IsNullOrWhiteSpace(options.Host))
        {
            failures.Add("Mqtt:External:Host must name the broker.");
        }

        if (options.Port is < 1 or > 65535)
        {
            failures.Add($"Mqtt:External:Port must be 1-65535 (was {options.Port}).");
        }

        if (options.ProtocolVersion is not ("3.1.1" or "311" or "4" or "5.0" or "5"))
        {
            failures.Add($"Mqtt:External:ProtocolVersion must be 3.1.1 or 5.0 (was '{options.ProtocolVersion}').");
        }

        if (options.QoS is not (1 or 2))
        {
            failures.Add($"Mqtt:External:QoS must be 1 or 2 (was {options.QoS}): QoS 0 would let the broker drop readings.");
        }

        if (options.SharedGroup.AsSpan().IndexOfAny("/+#") >= 0)
        {
            failures.Add($"Mqtt:External:SharedGroup must not contain '/', '+' or '#' (was '{options.SharedGroup}').");
        }

        if (options.ReceiveMaximum is < 1 or > 65535)
        {
            failures.Add($"Mqtt:External:ReceiveMaximum must be 1-65535 (was {options.ReceiveMaximum}).");
        }

        if (options.SessionExpirySeconds < 0)
        {
            failures.Add($"Mqtt:External:SessionExpirySeconds must not be negative (was {options.SessionExpirySeconds}).");
        }

        if (options.KeepAliveSeconds is < 0 or > 65535)
        {
            failures.Add($"Mqtt:External:KeepAliveSeconds must be 0-65535 (was {options.KeepAliveSeconds}).");
        }

        if (options.ClientId is { Length: > 0 } clientId && System.Text.Encoding.UTF8.GetByteCount(clientId) > 65535)
        {
            failures.Add("Mqtt:External:ClientId is longer than 65,535 bytes of UTF-8.");
        }

        if (!string.IsNullOrEmpty(options.Password) && string.IsNullOrEmpty(options.UserName) && options.ParsedProtocolVersion == MqttProtocolVersion.V311)
        {
            failures.Add("Mqtt:External:Password needs Mqtt:External:UserName with MQTT 3.1.1.");
        }

        if (options.SendsCredentialsInClear && !options.AllowCredentialsWithoutTls)
        {
            failures.Add($"Mqtt:External:Tls is off, so the user name and password for {options.Host} would cross the network in clear. " +
                "Set Mqtt:External:Tls=true (and Mqtt:External:CaCertificatePath if the broker's certificate is not in the system's trust store), " +
                "or, only on a network you trust, opt out with Mqtt:External:AllowCredentialsWithoutTls=true.");
        }

        if (options.CaCertificatePath is { Length: > 0 } ca && !File.Exists(ca))
        {
            failures.Add($"Mqtt:External:CaCertificatePath '{ca}' does not exist.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

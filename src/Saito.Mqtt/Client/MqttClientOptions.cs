using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>
/// How an <see cref="MqttClient"/> reaches and talks to a broker. Bindable from configuration
/// (<c>AddOptions&lt;MqttClientOptions&gt;().BindConfiguration("Mqtt:Client")</c>) and validated by
/// <see cref="MqttClientOptionsValidator"/>; <see cref="MqttClient"/> validates again when it is created.
/// The client reads the options when it connects: do not change them while it runs.
/// </summary>
public sealed class MqttClientOptions
{
    /// <summary>The largest packet MQTT can express (a four-byte remaining length plus the fixed header).</summary>
    public const int MaxPossiblePacketSize = MqttFrameReader.MaxRemainingLength + 5;

    public string Host { get; set; } = "localhost";

    public int Port { get; set; } = 1883;

    public MqttClientTlsOptions Tls { get; set; } = new();

    public MqttProtocolVersion ProtocolVersion { get; set; } = MqttProtocolVersion.V500;

    /// <summary>
    /// The client identifier. Empty lets the broker assign one (5.0 reports it in CONNACK and the client
    /// keeps it for reconnects; 3.1.1 allows an empty identifier only with a clean session).
    /// Several Saito instances sharing one stream each need their own identifier.
    /// </summary>
    public string ClientId { get; set; } = string.Empty;

    /// <summary>
    /// Clean Session (3.1.1) or Clean Start (5.0) on the first connection. In 5.0 with a
    /// <see cref="SessionExpiry"/> above zero, reconnects always ask to resume the session
    /// (Clean Start 0): a network drop should not throw away what the broker holds for us.
    /// </summary>
    public bool CleanStart { get; set; } = true;

    /// <summary>5.0 only: how long the broker keeps the session after the connection closes.
    /// <see cref="Timeout.InfiniteTimeSpan"/> means never expire.</summary>
    public TimeSpan SessionExpiry { get; set; } = TimeSpan.Zero;

    /// <summary>Keep-alive in whole seconds (0 turns it off). The broker may override it in a 5.0 CONNACK.</summary>
    public TimeSpan KeepAlive { get; set; } = TimeSpan.FromSeconds(60);

    public string? UserName { get; set; }

    /// <summary>Sent as UTF-8.</summary>
    public string? Password { get; set; }

    public MqttWill? Will { get; set; }

    /// <summary>
    /// The most inbound QoS 1/2 messages delivered to the application and not yet acknowledged. Sent to a
    /// 5.0 broker as Receive Maximum; with 3.1.1 the client stops reading the socket at this limit (the
    /// broker's own in-flight window usually stops it first). Also the capacity of <see cref="MqttClient.Messages"/>.
    /// While reading is stopped no PUBACK for our own publishes is read either: with 3.1.1, do not hold inbound
    /// acknowledgements while awaiting an outbound QoS 1/2 publish.
    /// </summary>
    public int ReceiveMaximum { get; set; } = 100;

    /// <summary>The largest inbound packet accepted; sent to a 5.0 broker as Maximum Packet Size.</summary>
    public int MaxPacketSize { get; set; } = 16 * 1024 * 1024;

    public MqttReconnectOptions Reconnect { get; set; } = new();

    /// <summary>
    /// Subscribe again after every reconnect, even when the broker says it kept the session. Off by default (the
    /// standard says a kept session keeps its subscriptions). Turn it on for brokers that restore persistent
    /// sessions but not all their subscriptions: Mosquitto 2.0 keeps plain subscriptions across a restart but
    /// drops shared ones (<c>$share/...</c>). Subscribing again to the same filter replaces the subscription.
    /// </summary>
    public bool AlwaysResubscribe { get; set; }

    /// <summary>From the start of the TCP connect to the CONNACK (TLS handshake included).</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Every problem with these options; empty when they are usable.</summary>
    public IReadOnlyList<string> Validate()
    {
        var errors = new List<string>();
        if (string.IsNullOrWhiteSpace(Host))
        {
            errors.Add("Host is required.");
        }

        if (Port is < 1 or > 65535)
        {
            errors.Add($"Port {Port} is not between 1 and 65535.");
        }

        if (ProtocolVersion is not (MqttProtocolVersion.V311 or MqttProtocolVersion.V500))
        {
            errors.Add($"ProtocolVersion {ProtocolVersion} is not supported (V311 or V500).");
        }

        bool v5 = ProtocolVersion == MqttProtocolVersion.V500;
        if (ClientId is null)
        {
            errors.Add("ClientId must not be null (use an empty string to have the broker assign one).");
        }
        else
        {
            if (Encoding.UTF8.GetByteCount(ClientId) > ushort.MaxValue)
            {
                errors.Add("ClientId is longer than 65,535 bytes of UTF-8.");
            }

            if (ClientId.Length == 0 && !CleanStart && !v5)
            {
                errors.Add("MQTT 3.1.1 needs a ClientId when CleanStart (clean session) is false.");
            }
        }

        if (SessionExpiry != TimeSpan.Zero && !v5)
        {
            errors.Add("SessionExpiry exists only in MQTT 5.0; with 3.1.1 use CleanStart = false for a persistent session.");
        }

        if (SessionExpiry != Timeout.InfiniteTimeSpan && (SessionExpiry < TimeSpan.Zero || SessionExpiry.TotalSeconds >= uint.MaxValue))
        {
            errors.Add($"SessionExpiry {SessionExpiry} is not between zero and {uint.MaxValue - 1} seconds (or infinite).");
        }

        if (KeepAlive < TimeSpan.Zero || KeepAlive.TotalSeconds > ushort.MaxValue)
        {
            errors.Add($"KeepAlive {KeepAlive} is not between 0 and 65,535 seconds.");
        }
        else if (KeepAlive > TimeSpan.Zero && KeepAlive < TimeSpan.FromSeconds(1))
        {
            errors.Add("KeepAlive is counted in whole seconds: use zero (off) or at least one second.");
        }

        if (Password is not null && UserName is null && !v5)
        {
            errors.Add("MQTT 3.1.1 does not allow a Password without a UserName.");
        }

        if (Will is not null)
        {
            if (string.IsNullOrEmpty(Will.Topic) || Will.Topic.AsSpan().IndexOfAny('+', '#') >= 0)
            {
                errors.Add("Will.Topic must be a topic name: not empty, no wildcards.");
            }

            if (Will.QoS is not (MqttQoS.AtMostOnce or MqttQoS.AtLeastOnce or MqttQoS.ExactlyOnce))
            {
                errors.Add($"Will.QoS {Will.QoS} is not 0, 1 or 2.");
            }

            if (Will.Properties is not null && !v5)
            {
                errors.Add("Will.Properties exist only in MQTT 5.0.");
            }
        }

        if (ReceiveMaximum is < 1 or > ushort.MaxValue)
        {
            errors.Add($"ReceiveMaximum {ReceiveMaximum} is not between 1 and 65,535.");
        }

        if (MaxPacketSize is < 128 or > MaxPossiblePacketSize)
        {
            errors.Add($"MaxPacketSize {MaxPacketSize} is not between 128 and {MaxPossiblePacketSize}.");
        }

        if (ConnectTimeout <= TimeSpan.Zero)
        {
            errors.Add("ConnectTimeout must be positive.");
        }

        if (Reconnect is null)
        {
            errors.Add("Reconnect must not be null.");
        }
        else
        {
            if (Reconnect.InitialDelay <= TimeSpan.Zero)
            {
                errors.Add("Reconnect.InitialDelay must be positive.");
            }

            if (Reconnect.MaxDelay < Reconnect.InitialDelay)
            {
                errors.Add("Reconnect.MaxDelay must not be shorter than Reconnect.InitialDelay.");
            }

            if (Reconnect.Jitter is < 0 or > 1 || double.IsNaN(Reconnect.Jitter))
            {
                errors.Add($"Reconnect.Jitter {Reconnect.Jitter} is not a fraction between 0 and 1.");
            }
        }

        if (Tls is null)
        {
            errors.Add("Tls must not be null.");
        }
        else if (Tls.Enabled)
        {
            if (Tls.CaCertificatePath is not null && !File.Exists(Tls.CaCertificatePath))
            {
                errors.Add($"Tls.CaCertificatePath '{Tls.CaCertificatePath}' does not exist.");
            }

            if (Tls.CaCertificatePath is not null && Tls.ServerCertificateValidation is not null)
            {
                errors.Add("Set Tls.CaCertificatePath or Tls.ServerCertificateValidation, not both.");
            }

            if (Tls.ClientCertificatePath is not null && !File.Exists(Tls.ClientCertificatePath))
            {
                errors.Add($"Tls.ClientCertificatePath '{Tls.ClientCertificatePath}' does not exist.");
            }

            if (Tls.ClientKeyPath is not null && Tls.ClientCertificatePath is null)
            {
                errors.Add("Tls.ClientKeyPath needs Tls.ClientCertificatePath.");
            }

            if (Tls.ClientCertificatePath is not null && Tls.ClientCertificate is not null)
            {
                errors.Add("Set Tls.ClientCertificatePath or Tls.ClientCertificate, not both.");
            }
        }

        return errors;
    }

    /// <summary>Throws <see cref="OptionsValidationException"/> listing every problem.</summary>
    public void ThrowIfInvalid()
    {
        var errors = Validate();
        if (errors.Count > 0)
        {
            throw new OptionsValidationException(nameof(MqttClientOptions), typeof(MqttClientOptions), errors);
        }
    }
}

public sealed class MqttClientTlsOptions
{
    public bool Enabled { get; set; }

    /// <summary>PEM file with the CA certificate(s) the broker's certificate must chain to (instead of the system store).</summary>
    public string? CaCertificatePath { get; set; }

    /// <summary>A validation of your own; replaces the default (system store, or <see cref="CaCertificatePath"/>).</summary>
    public RemoteCertificateValidationCallback? ServerCertificateValidation { get; set; }

    /// <summary>PEM client certificate for mutual TLS, with <see cref="ClientKeyPath"/> when the key is in another file.</summary>
    public string? ClientCertificatePath { get; set; }

    public string? ClientKeyPath { get; set; }

    /// <summary>A client certificate (with private key) supplied in code instead of files.</summary>
    public X509Certificate2? ClientCertificate { get; set; }

    /// <summary>The name the broker's certificate must carry (SNI too). Defaults to <see cref="MqttClientOptions.Host"/>.</summary>
    public string? TargetHost { get; set; }
}

/// <summary>Exponential backoff between reconnect attempts: InitialDelay, doubled each failure up to MaxDelay, each delay moved by up to ±Jitter of itself.</summary>
public sealed class MqttReconnectOptions
{
    /// <summary>Off: a lost connection stays lost (the Disconnected event says so).</summary>
    public bool Enabled { get; set; } = true;

    public TimeSpan InitialDelay { get; set; } = TimeSpan.FromSeconds(1);

    public TimeSpan MaxDelay { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>A fraction between 0 and 1, so that instances that lost the same broker do not all return at the same instant.</summary>
    public double Jitter { get; set; } = 0.2;
}

/// <summary>For <c>AddOptions&lt;MqttClientOptions&gt;().ValidateOnStart()</c>: bad options fail at boot.</summary>
public sealed class MqttClientOptionsValidator : IValidateOptions<MqttClientOptions>
{
    public ValidateOptionsResult Validate(string? name, MqttClientOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var errors = options.Validate();
        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }
}

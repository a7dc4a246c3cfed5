namespace Saito.Mqtt.Packets;

/// <summary>A user property: a UTF-8 string pair; order and duplicates are significant.</summary>
public readonly record struct MqttUserProperty(string Name, string Value);

/// <summary>MQTT 5.0 property identifiers (section 2.2.2.2).</summary>
public enum MqttPropertyId : byte
{
    PayloadFormatIndicator = 0x01,
    MessageExpiryInterval = 0x02,
    ContentType = 0x03,
    ResponseTopic = 0x08,
    CorrelationData = 0x09,
    SubscriptionIdentifier = 0x0B,
    SessionExpiryInterval = 0x11,
    AssignedClientIdentifier = 0x12,
    ServerKeepAlive = 0x13,
    AuthenticationMethod = 0x15,
    AuthenticationData = 0x16,
    RequestProblemInformation = 0x17,
    WillDelayInterval = 0x18,
    RequestResponseInformation = 0x19,
    ResponseInformation = 0x1A,
    ServerReference = 0x1C,
    ReasonString = 0x1F,
    ReceiveMaximum = 0x21,
    TopicAliasMaximum = 0x22,
    TopicAlias = 0x23,
    MaximumQoS = 0x24,
    RetainAvailable = 0x25,
    UserProperty = 0x26,
    MaximumPacketSize = 0x27,
    WildcardSubscriptionAvailable = 0x28,
    SubscriptionIdentifierAvailable = 0x29,
    SharedSubscriptionAvailable = 0x2A,
}

/// <summary>
/// The MQTT 5.0 properties of a packet. A null member was absent on the wire. The same class
/// serves every packet type; the codec checks that only the properties the standard allows for
/// a packet type appear in it (a property in the wrong packet is a protocol error).
/// Will properties of CONNECT use the same class.
/// </summary>
public sealed class MqttProperties
{
    public byte? PayloadFormatIndicator { get; set; }
    public uint? MessageExpiryInterval { get; set; }
    public string? ContentType { get; set; }
    public string? ResponseTopic { get; set; }
    public ReadOnlyMemory<byte>? CorrelationData { get; set; }

    /// <summary>Subscription identifiers: one in SUBSCRIBE; one per matching subscription in an outbound PUBLISH.</summary>
    public List<uint>? SubscriptionIdentifiers { get; set; }

    public uint? SessionExpiryInterval { get; set; }
    public string? AssignedClientIdentifier { get; set; }
    public ushort? ServerKeepAlive { get; set; }
    public string? AuthenticationMethod { get; set; }
    public ReadOnlyMemory<byte>? AuthenticationData { get; set; }
    public byte? RequestProblemInformation { get; set; }
    public uint? WillDelayInterval { get; set; }
    public byte? RequestResponseInformation { get; set; }
    public string? ResponseInformation { get; set; }
    public string? ServerReference { get; set; }
    public string? ReasonString { get; set; }
    public ushort? ReceiveMaximum { get; set; }
    public ushort? TopicAliasMaximum { get; set; }
    public ushort? TopicAlias { get; set; }
    public byte? MaximumQoS { get; set; }
    public byte? RetainAvailable { get; set; }
    public List<MqttUserProperty>? UserProperties { get; set; }
    public uint? MaximumPacketSize { get; set; }
    public byte? WildcardSubscriptionAvailable { get; set; }
    public byte? SubscriptionIdentifierAvailable { get; set; }
    public byte? SharedSubscriptionAvailable { get; set; }

    /// <summary>
    /// What the properties a message carries on (content type, response topic, correlation data, user properties)
    /// hold in memory, about: two bytes a character, the bytes, and 32 B per user property. Counted with the payload
    /// against the broker's byte limits (queued and retained messages), which a client could otherwise pass with
    /// properties of up to a packet's size each.
    /// </summary>
    public long HeldBytes()
    {
        long bytes = 2L * ((ContentType?.Length ?? 0) + (ResponseTopic?.Length ?? 0)) + (CorrelationData?.Length ?? 0);
        if (UserProperties is { } pairs)
        {
            foreach (var pair in pairs)
            {
                bytes += 32 + (2L * (pair.Name.Length + pair.Value.Length));
            }
        }

        return bytes;
    }

    /// <summary>True when no property is set (the encoder then writes a zero property length).</summary>
    public bool IsEmpty =>
        PayloadFormatIndicator is null && MessageExpiryInterval is null && ContentType is null &&
        ResponseTopic is null && CorrelationData is null && (SubscriptionIdentifiers is null || SubscriptionIdentifiers.Count == 0) &&
        SessionExpiryInterval is null && AssignedClientIdentifier is null && ServerKeepAlive is null &&
        AuthenticationMethod is null && AuthenticationData is null && RequestProblemInformation is null &&
        WillDelayInterval is null && RequestResponseInformation is null && ResponseInformation is null &&
        ServerReference is null && ReasonString is null && ReceiveMaximum is null && TopicAliasMaximum is null &&
        TopicAlias is null && MaximumQoS is null && RetainAvailable is null &&
        (UserProperties is null || UserProperties.Count == 0) && MaximumPacketSize is null &&
        WildcardSubscriptionAvailable is null && SubscriptionIdentifierAvailable is null && SharedSubscriptionAvailable is null;

    /// <summary>A shallow copy: lists are copied, byte buffers are shared (they are never mutated).</summary>
    public MqttProperties Clone()
    {
        var copy = (MqttProperties)MemberwiseClone();
        copy.SubscriptionIdentifiers = SubscriptionIdentifiers is null ? null : [.. SubscriptionIdentifiers];
        copy.UserProperties = UserProperties is null ? null : [.. UserProperties];
        return copy;
    }
}

namespace Saito.Mqtt.Packets;

/// <summary>MQTT control packet types (the high nibble of the fixed header).</summary>
public enum MqttPacketType : byte
{
    Connect = 1,
    ConnAck = 2,
    Publish = 3,
    PubAck = 4,
    PubRec = 5,
    PubRel = 6,
    PubComp = 7,
    Subscribe = 8,
    SubAck = 9,
    Unsubscribe = 10,
    UnsubAck = 11,
    PingReq = 12,
    PingResp = 13,
    Disconnect = 14,
    Auth = 15,
}

/// <summary>The protocol level byte of CONNECT.</summary>
public enum MqttProtocolVersion : byte
{
    V311 = 4,
    V500 = 5,
}

public enum MqttQoS : byte
{
    AtMostOnce = 0,
    AtLeastOnce = 1,
    ExactlyOnce = 2,
}

/// <summary>MQTT 5.0 subscription option "Retain Handling".</summary>
public enum MqttRetainHandling : byte
{
    SendAtSubscribe = 0,
    SendAtSubscribeIfNew = 1,
    DoNotSend = 2,
}

/// <summary>
/// MQTT 5.0 reason codes (OASIS MQTT 5.0, section 2.4). MQTT 3.1.1 CONNACK return codes and
/// SUBACK return codes are a subset expressed with the same byte values where they coincide;
/// see <see cref="MqttConnectReturnCode"/> for the 3.1.1 CONNACK codes.
/// </summary>
#pragma warning disable CA1069 // The standard gives one byte several names (0x00 is Success, Normal disconnection and Granted QoS 0).
public enum MqttReasonCode : byte
{
    Success = 0x00,
    NormalDisconnection = 0x00,
    GrantedQoS0 = 0x00,
    GrantedQoS1 = 0x01,
    GrantedQoS2 = 0x02,
    DisconnectWithWillMessage = 0x04,
    NoMatchingSubscribers = 0x10,
    NoSubscriptionExisted = 0x11,
    ContinueAuthentication = 0x18,
    ReAuthenticate = 0x19,
    UnspecifiedError = 0x80,
    MalformedPacket = 0x81,
    ProtocolError = 0x82,
    ImplementationSpecificError = 0x83,
    UnsupportedProtocolVersion = 0x84,
    ClientIdentifierNotValid = 0x85,
    BadUserNameOrPassword = 0x86,
    NotAuthorized = 0x87,
    ServerUnavailable = 0x88,
    ServerBusy = 0x89,
    Banned = 0x8A,
    ServerShuttingDown = 0x8B,
    BadAuthenticationMethod = 0x8C,
    KeepAliveTimeout = 0x8D,
    SessionTakenOver = 0x8E,
    TopicFilterInvalid = 0x8F,
    TopicNameInvalid = 0x90,
    PacketIdentifierInUse = 0x91,
    PacketIdentifierNotFound = 0x92,
    ReceiveMaximumExceeded = 0x93,
    TopicAliasInvalid = 0x94,
    PacketTooLarge = 0x95,
    MessageRateTooHigh = 0x96,
    QuotaExceeded = 0x97,
    AdministrativeAction = 0x98,
    PayloadFormatInvalid = 0x99,
    RetainNotSupported = 0x9A,
    QoSNotSupported = 0x9B,
    UseAnotherServer = 0x9C,
    ServerMoved = 0x9D,
    SharedSubscriptionsNotSupported = 0x9E,
    ConnectionRateExceeded = 0x9F,
    MaximumConnectTime = 0xA0,
    SubscriptionIdentifiersNotSupported = 0xA1,
    WildcardSubscriptionsNotSupported = 0xA2,
}
#pragma warning restore CA1069

/// <summary>MQTT 3.1.1 CONNACK return codes (section 3.2.2.3).</summary>
public enum MqttConnectReturnCode : byte
{
    Accepted = 0,
    UnacceptableProtocolVersion = 1,
    IdentifierRejected = 2,
    ServerUnavailable = 3,
    BadUserNameOrPassword = 4,
    NotAuthorized = 5,
}

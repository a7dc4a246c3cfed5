using System.Text;
using FsCheck;
using FsCheck.Fluent;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// FsCheck generators for every MQTT control packet, each respecting the rules of the protocol
/// version it is generated for: 3.1.1 has no properties and no reason codes on acknowledgements,
/// AUTH exists only in 5.0, strings are well-formed UTF-8 without U+0000, packet identifiers are
/// non-zero where the standard requires it, and each packet carries only the properties the 5.0
/// standard allows for it (section 2.2.2.2). Generated packets are in the form the decoder returns
/// (an empty property set is null), so a decoded packet can be compared with its original.
/// </summary>
internal static class PacketGenerators
{
    public static readonly MqttProtocolVersion[] Versions = [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    /// <summary>The packet types of each version (AUTH is 5.0 only).</summary>
    public static IEnumerable<MqttPacketType> TypesOf(MqttProtocolVersion version) =>
        Enum.GetValues<MqttPacketType>().Where(t => t != MqttPacketType.Auth || version == MqttProtocolVersion.V500);

    public static Gen<MqttPacket> Packet(MqttPacketType type, MqttProtocolVersion version) => type switch
    {
        MqttPacketType.Connect => Connect(version).Select(p => (MqttPacket)p),
        MqttPacketType.ConnAck => ConnAck(version).Select(p => (MqttPacket)p),
        MqttPacketType.Publish => Publish(version).Select(p => (MqttPacket)p),
        MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubRel or MqttPacketType.PubComp =>
            PublishAck(type, version).Select(p => (MqttPacket)p),
        MqttPacketType.Subscribe => Subscribe(version).Select(p => (MqttPacket)p),
        MqttPacketType.SubAck => SubAck(version).Select(p => (MqttPacket)p),
        MqttPacketType.Unsubscribe => Unsubscribe(version).Select(p => (MqttPacket)p),
        MqttPacketType.UnsubAck => UnsubAck(version).Select(p => (MqttPacket)p),
        MqttPacketType.PingReq => Gen.Constant<MqttPacket>(PingReqPacket.Instance),
        MqttPacketType.PingResp => Gen.Constant<MqttPacket>(PingRespPacket.Instance),
        MqttPacketType.Disconnect => Disconnect(version).Select(p => (MqttPacket)p),
        MqttPacketType.Auth when version == MqttProtocolVersion.V500 => Auth().Select(p => (MqttPacket)p),
        _ => throw new ArgumentOutOfRangeException(nameof(type), type, $"No {type} in {version}"),
    };

    /// <summary>Any packet of the version.</summary>
    public static Gen<MqttPacket> AnyPacket(MqttProtocolVersion version) =>
        Gen.OneOf(TypesOf(version).Select(t => Packet(t, version)));

    // ---- Packets --------------------------------------------------------------------------------

    public static Gen<ConnectPacket> Connect(MqttProtocolVersion version) =>
        from clean in Bool
        from keepAlive in UInt16
        from clientId in Text
        from userName in Optional(Text)
        from password in Optional(Binary)
        from will in Optional(Will(version))
        from properties in Properties(version, ConnectProperties)
        select new ConnectPacket
        {
            ProtocolVersion = version,
            CleanStart = clean,
            KeepAliveSeconds = keepAlive,
            ClientId = clientId,
            UserName = userName,

            // 3.1.1: a password only with a user name [MQTT-3.1.2-22]; 5.0 allows it alone.
            Password = version == MqttProtocolVersion.V311 && userName is null ? null : password,
            Will = will,
            Properties = WithAuthenticationDataOnlyAfterMethod(properties),
        };

    public static Gen<MqttWill> Will(MqttProtocolVersion version) =>
        from topic in TopicName
        from payload in Binary
        from qos in QoS
        from retain in Bool
        from properties in Properties(version, WillProperties)
        select new MqttWill { Topic = topic, Payload = payload, QoS = qos, Retain = retain, Properties = properties };

    public static Gen<ConnAckPacket> ConnAck(MqttProtocolVersion version) =>
        from code in version == MqttProtocolVersion.V311
            ? Gen.Choose(0, 5).Select(c => (byte)c)
            : Gen.Elements(ConnAckReasonCodes).Select(c => (byte)c)
        from sessionPresent in Bool
        from properties in Properties(version, ConnAckProperties)
        select new ConnAckPacket
        {
            // Session Present is 0 whenever the connection is refused [MQTT-3.2.2-4] / [MQTT-3.2.2-6].
            SessionPresent = sessionPresent && code == 0,
            ReasonCode = code,
            Properties = properties,
        };

    public static Gen<PublishPacket> Publish(MqttProtocolVersion version) =>
        from qos in QoS
        from retain in Bool
        from dup in Bool
        from packetId in NonZeroPacketId
        from topic in TopicName
        from payload in Payload
        from properties in Properties(version, PublishProperties)
        from aliasOnly in Gen.Frequency((5, Gen.Constant(false)), (1, Gen.Constant(true)))
        select new PublishPacket
        {
            // 5.0: a topic may be left out when a topic alias stands for it (section 3.3.2.3.4).
            Topic = aliasOnly && properties?.TopicAlias is not null ? string.Empty : topic,
            QoS = qos,
            Retain = retain,

            // DUP is 0 for QoS 0 [MQTT-3.3.1-2]; the packet identifier exists only for QoS > 0 [MQTT-2.2.1-2].
            Dup = dup && qos != MqttQoS.AtMostOnce,
            PacketId = qos == MqttQoS.AtMostOnce ? (ushort)0 : packetId,
            Payload = payload,
            Properties = properties,
        };

    public static Gen<PublishAckPacket> PublishAck(MqttPacketType type, MqttProtocolVersion version) =>
        from packetId in NonZeroPacketId
        from code in Gen.Elements(type is MqttPacketType.PubAck or MqttPacketType.PubRec ? PubAckReasonCodes : PubRelReasonCodes)
        from properties in Properties(version, AckProperties)
        select new PublishAckPacket(type)
        {
            PacketId = packetId,
            ReasonCode = version == MqttProtocolVersion.V500 ? code : MqttReasonCode.Success,
            Properties = properties,
        };

    public static Gen<SubscribePacket> Subscribe(MqttProtocolVersion version) =>
        from packetId in NonZeroPacketId
        from subscriptions in Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(Subscription(version), n))
        from properties in Properties(version, SubscribeProperties)
        select new SubscribePacket { PacketId = packetId, Subscriptions = [.. subscriptions], Properties = properties };

    public static Gen<MqttSubscription> Subscription(MqttProtocolVersion version) =>
        from filter in TopicFilter
        from qos in QoS
        from noLocal in Bool
        from retainAsPublished in Bool
        from retainHandling in Gen.Elements(MqttRetainHandling.SendAtSubscribe, MqttRetainHandling.SendAtSubscribeIfNew, MqttRetainHandling.DoNotSend)
        select version == MqttProtocolVersion.V500
            ? new MqttSubscription { TopicFilter = filter, QoS = qos, NoLocal = noLocal, RetainAsPublished = retainAsPublished, RetainHandling = retainHandling }
            : new MqttSubscription { TopicFilter = filter, QoS = qos };

    public static Gen<SubAckPacket> SubAck(MqttProtocolVersion version) =>
        from packetId in NonZeroPacketId
        from codes in Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(Gen.Elements(version == MqttProtocolVersion.V500 ? SubAckReasonCodes : SubAckReturnCodes311), n))
        from properties in Properties(version, AckProperties)
        select new SubAckPacket { PacketId = packetId, ReasonCodes = [.. codes], Properties = properties };

    public static Gen<UnsubscribePacket> Unsubscribe(MqttProtocolVersion version) =>
        from packetId in NonZeroPacketId
        from filters in Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(TopicFilter, n))
        from properties in Properties(version, [MqttPropertyId.UserProperty])
        select new UnsubscribePacket { PacketId = packetId, TopicFilters = [.. filters], Properties = properties };

    public static Gen<UnsubAckPacket> UnsubAck(MqttProtocolVersion version) =>
        from packetId in NonZeroPacketId
        from codes in Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(Gen.Elements(UnsubAckReasonCodes), n))
        from properties in Properties(version, AckProperties)
        select new UnsubAckPacket
        {
            PacketId = packetId,
            ReasonCodes = version == MqttProtocolVersion.V500 ? [.. codes] : [],
            Properties = properties,
        };

    public static Gen<DisconnectPacket> Disconnect(MqttProtocolVersion version) =>
        from code in Gen.Elements(DisconnectReasonCodes)
        from properties in Properties(version, DisconnectProperties)
        select new DisconnectPacket
        {
            ReasonCode = version == MqttProtocolVersion.V500 ? code : MqttReasonCode.NormalDisconnection,
            Properties = properties,
        };

    public static Gen<AuthPacket> Auth() =>
        from code in Gen.Elements(MqttReasonCode.Success, MqttReasonCode.ContinueAuthentication, MqttReasonCode.ReAuthenticate)
        from properties in Properties(MqttProtocolVersion.V500, AuthProperties)
        select new AuthPacket { ReasonCode = code, Properties = WithAuthenticationDataOnlyAfterMethod(properties) };

    // ---- Properties -----------------------------------------------------------------------------

    private static readonly MqttPropertyId[] ConnectProperties =
    [
        MqttPropertyId.SessionExpiryInterval, MqttPropertyId.AuthenticationMethod, MqttPropertyId.AuthenticationData,
        MqttPropertyId.RequestProblemInformation, MqttPropertyId.RequestResponseInformation, MqttPropertyId.ReceiveMaximum,
        MqttPropertyId.TopicAliasMaximum, MqttPropertyId.UserProperty, MqttPropertyId.MaximumPacketSize,
    ];

    private static readonly MqttPropertyId[] WillProperties =
    [
        MqttPropertyId.PayloadFormatIndicator, MqttPropertyId.MessageExpiryInterval, MqttPropertyId.ContentType,
        MqttPropertyId.ResponseTopic, MqttPropertyId.CorrelationData, MqttPropertyId.WillDelayInterval, MqttPropertyId.UserProperty,
    ];

    private static readonly MqttPropertyId[] ConnAckProperties =
    [
        MqttPropertyId.SessionExpiryInterval, MqttPropertyId.ReceiveMaximum, MqttPropertyId.MaximumQoS, MqttPropertyId.RetainAvailable,
        MqttPropertyId.MaximumPacketSize, MqttPropertyId.AssignedClientIdentifier, MqttPropertyId.TopicAliasMaximum,
        MqttPropertyId.ReasonString, MqttPropertyId.UserProperty, MqttPropertyId.WildcardSubscriptionAvailable,
        MqttPropertyId.SubscriptionIdentifierAvailable, MqttPropertyId.SharedSubscriptionAvailable, MqttPropertyId.ServerKeepAlive,
        MqttPropertyId.ResponseInformation, MqttPropertyId.ServerReference, MqttPropertyId.AuthenticationMethod,
        MqttPropertyId.AuthenticationData,
    ];

    private static readonly MqttPropertyId[] PublishProperties =
    [
        MqttPropertyId.PayloadFormatIndicator, MqttPropertyId.MessageExpiryInterval, MqttPropertyId.TopicAlias,
        MqttPropertyId.ResponseTopic, MqttPropertyId.CorrelationData, MqttPropertyId.UserProperty,
        MqttPropertyId.SubscriptionIdentifier, MqttPropertyId.ContentType,
    ];

    private static readonly MqttPropertyId[] AckProperties = [MqttPropertyId.ReasonString, MqttPropertyId.UserProperty];

    private static readonly MqttPropertyId[] SubscribeProperties = [MqttPropertyId.SubscriptionIdentifier, MqttPropertyId.UserProperty];

    private static readonly MqttPropertyId[] DisconnectProperties =
    [
        MqttPropertyId.SessionExpiryInterval, MqttPropertyId.ReasonString, MqttPropertyId.UserProperty, MqttPropertyId.ServerReference,
    ];

    private static readonly MqttPropertyId[] AuthProperties =
    [
        MqttPropertyId.AuthenticationMethod, MqttPropertyId.AuthenticationData, MqttPropertyId.ReasonString, MqttPropertyId.UserProperty,
    ];

    /// <summary>Null for 3.1.1; for 5.0 any subset of <paramref name="allowed"/> (null when the subset is empty).</summary>
    public static Gen<MqttProperties?> Properties(MqttProtocolVersion version, MqttPropertyId[] allowed) =>
        version == MqttProtocolVersion.V311
            ? Gen.Constant<MqttProperties?>(null)
            : from ids in Gen.SubListOf(allowed)
              from setters in Gen.CollectToList(ids, id => Setter(id, allowed))
              select Build(setters);

    private static MqttProperties? Build(IEnumerable<Action<MqttProperties>> setters)
    {
        var properties = new MqttProperties();
        foreach (var set in setters)
        {
            set(properties);
        }

        return properties.IsEmpty ? null : properties;
    }

    // Authentication Data without an Authentication Method is a Protocol Error (5.0 section 3.1.2.11.10).
    private static MqttProperties? WithAuthenticationDataOnlyAfterMethod(MqttProperties? p)
    {
        if (p is { AuthenticationData: not null, AuthenticationMethod: null })
        {
            p.AuthenticationMethod = "SCRAM-SHA-1";
        }

        return p;
    }

    private static Gen<Action<MqttProperties>> Setter(MqttPropertyId id, MqttPropertyId[] context) => id switch
    {
        MqttPropertyId.PayloadFormatIndicator => Flag.Select(v => Set(p => p.PayloadFormatIndicator = v)),
        MqttPropertyId.MessageExpiryInterval => UInt32.Select(v => Set(p => p.MessageExpiryInterval = v)),
        MqttPropertyId.ContentType => Text.Select(v => Set(p => p.ContentType = v)),
        MqttPropertyId.ResponseTopic => TopicName.Select(v => Set(p => p.ResponseTopic = v)),
        MqttPropertyId.CorrelationData => Binary.Select(v => Set(p => p.CorrelationData = v)),

        // One identifier in SUBSCRIBE; an outbound PUBLISH carries one per matching subscription.
        MqttPropertyId.SubscriptionIdentifier => (context == SubscribeProperties ? Gen.Constant(1) : Gen.Choose(1, 3))
            .SelectMany(n => Gen.ListOf(SubscriptionIdentifier, n))
            .Select(v => Set(p => p.SubscriptionIdentifiers = [.. v])),
        MqttPropertyId.SessionExpiryInterval => UInt32.Select(v => Set(p => p.SessionExpiryInterval = v)),
        MqttPropertyId.AssignedClientIdentifier => Text.Select(v => Set(p => p.AssignedClientIdentifier = v)),
        MqttPropertyId.ServerKeepAlive => UInt16.Select(v => Set(p => p.ServerKeepAlive = v)),
        MqttPropertyId.AuthenticationMethod => Text.Select(v => Set(p => p.AuthenticationMethod = v)),
        MqttPropertyId.AuthenticationData => Binary.Select(v => Set(p => p.AuthenticationData = v)),
        MqttPropertyId.RequestProblemInformation => Flag.Select(v => Set(p => p.RequestProblemInformation = v)),
        MqttPropertyId.WillDelayInterval => UInt32.Select(v => Set(p => p.WillDelayInterval = v)),
        MqttPropertyId.RequestResponseInformation => Flag.Select(v => Set(p => p.RequestResponseInformation = v)),
        MqttPropertyId.ResponseInformation => Text.Select(v => Set(p => p.ResponseInformation = v)),
        MqttPropertyId.ServerReference => Text.Select(v => Set(p => p.ServerReference = v)),
        MqttPropertyId.ReasonString => Text.Select(v => Set(p => p.ReasonString = v)),
        MqttPropertyId.ReceiveMaximum => Gen.Choose(1, ushort.MaxValue).Select(v => Set(p => p.ReceiveMaximum = (ushort)v)),
        MqttPropertyId.TopicAliasMaximum => UInt16.Select(v => Set(p => p.TopicAliasMaximum = v)),
        MqttPropertyId.TopicAlias => Gen.Choose(1, ushort.MaxValue).Select(v => Set(p => p.TopicAlias = (ushort)v)),
        MqttPropertyId.MaximumQoS => Flag.Select(v => Set(p => p.MaximumQoS = v)),
        MqttPropertyId.RetainAvailable => Flag.Select(v => Set(p => p.RetainAvailable = v)),
        MqttPropertyId.UserProperty => Gen.Choose(1, 3).SelectMany(n => Gen.ListOf(UserProperty, n))
            .Select(v => Set(p => p.UserProperties = [.. v])),
        MqttPropertyId.MaximumPacketSize => UInt32.Where(v => v != 0).Select(v => Set(p => p.MaximumPacketSize = v)),
        MqttPropertyId.WildcardSubscriptionAvailable => Flag.Select(v => Set(p => p.WildcardSubscriptionAvailable = v)),
        MqttPropertyId.SubscriptionIdentifierAvailable => Flag.Select(v => Set(p => p.SubscriptionIdentifierAvailable = v)),
        MqttPropertyId.SharedSubscriptionAvailable => Flag.Select(v => Set(p => p.SharedSubscriptionAvailable = v)),
        _ => throw new ArgumentOutOfRangeException(nameof(id), id, "Unknown property"),
    };

    private static Action<MqttProperties> Set(Action<MqttProperties> set) => set;

    // ---- Reason codes ---------------------------------------------------------------------------

    private static readonly MqttReasonCode[] ConnAckReasonCodes =
    [
        MqttReasonCode.Success, MqttReasonCode.UnspecifiedError, MqttReasonCode.MalformedPacket, MqttReasonCode.ProtocolError,
        MqttReasonCode.ImplementationSpecificError, MqttReasonCode.UnsupportedProtocolVersion, MqttReasonCode.ClientIdentifierNotValid,
        MqttReasonCode.BadUserNameOrPassword, MqttReasonCode.NotAuthorized, MqttReasonCode.ServerUnavailable, MqttReasonCode.ServerBusy,
        MqttReasonCode.Banned, MqttReasonCode.BadAuthenticationMethod, MqttReasonCode.TopicNameInvalid, MqttReasonCode.PacketTooLarge,
        MqttReasonCode.QuotaExceeded, MqttReasonCode.PayloadFormatInvalid, MqttReasonCode.RetainNotSupported,
        MqttReasonCode.QoSNotSupported, MqttReasonCode.UseAnotherServer, MqttReasonCode.ServerMoved,
        MqttReasonCode.ConnectionRateExceeded,
    ];

    private static readonly MqttReasonCode[] PubAckReasonCodes =
    [
        MqttReasonCode.Success, MqttReasonCode.NoMatchingSubscribers, MqttReasonCode.UnspecifiedError,
        MqttReasonCode.ImplementationSpecificError, MqttReasonCode.NotAuthorized, MqttReasonCode.TopicNameInvalid,
        MqttReasonCode.PacketIdentifierInUse, MqttReasonCode.QuotaExceeded, MqttReasonCode.PayloadFormatInvalid,
    ];

    private static readonly MqttReasonCode[] PubRelReasonCodes = [MqttReasonCode.Success, MqttReasonCode.PacketIdentifierNotFound];

    private static readonly MqttReasonCode[] SubAckReturnCodes311 =
        [MqttReasonCode.GrantedQoS0, MqttReasonCode.GrantedQoS1, MqttReasonCode.GrantedQoS2, MqttReasonCode.UnspecifiedError];

    private static readonly MqttReasonCode[] SubAckReasonCodes =
    [
        MqttReasonCode.GrantedQoS0, MqttReasonCode.GrantedQoS1, MqttReasonCode.GrantedQoS2, MqttReasonCode.UnspecifiedError,
        MqttReasonCode.ImplementationSpecificError, MqttReasonCode.NotAuthorized, MqttReasonCode.TopicFilterInvalid,
        MqttReasonCode.PacketIdentifierInUse, MqttReasonCode.QuotaExceeded, MqttReasonCode.SharedSubscriptionsNotSupported,
        MqttReasonCode.SubscriptionIdentifiersNotSupported, MqttReasonCode.WildcardSubscriptionsNotSupported,
    ];

    private static readonly MqttReasonCode[] UnsubAckReasonCodes =
    [
        MqttReasonCode.Success, MqttReasonCode.NoSubscriptionExisted, MqttReasonCode.UnspecifiedError,
        MqttReasonCode.ImplementationSpecificError, MqttReasonCode.NotAuthorized, MqttReasonCode.TopicFilterInvalid,
        MqttReasonCode.PacketIdentifierInUse,
    ];

    private static readonly MqttReasonCode[] DisconnectReasonCodes =
    [
        MqttReasonCode.NormalDisconnection, MqttReasonCode.DisconnectWithWillMessage, MqttReasonCode.UnspecifiedError,
        MqttReasonCode.MalformedPacket, MqttReasonCode.ProtocolError, MqttReasonCode.ImplementationSpecificError,
        MqttReasonCode.NotAuthorized, MqttReasonCode.ServerBusy, MqttReasonCode.ServerShuttingDown, MqttReasonCode.KeepAliveTimeout,
        MqttReasonCode.SessionTakenOver, MqttReasonCode.TopicFilterInvalid, MqttReasonCode.TopicNameInvalid,
        MqttReasonCode.ReceiveMaximumExceeded, MqttReasonCode.TopicAliasInvalid, MqttReasonCode.PacketTooLarge,
        MqttReasonCode.MessageRateTooHigh, MqttReasonCode.QuotaExceeded, MqttReasonCode.AdministrativeAction,
        MqttReasonCode.PayloadFormatInvalid, MqttReasonCode.RetainNotSupported, MqttReasonCode.QoSNotSupported,
        MqttReasonCode.UseAnotherServer, MqttReasonCode.ServerMoved, MqttReasonCode.SharedSubscriptionsNotSupported,
        MqttReasonCode.ConnectionRateExceeded, MqttReasonCode.MaximumConnectTime,
        MqttReasonCode.SubscriptionIdentifiersNotSupported, MqttReasonCode.WildcardSubscriptionsNotSupported,
    ];

    // ---- Data types (section 1.5) ---------------------------------------------------------------

    public static readonly Gen<bool> Bool = Gen.Elements(false, true);

    public static readonly Gen<byte> Flag = Gen.Elements((byte)0, (byte)1);

    public static readonly Gen<ushort> UInt16 = Gen.Frequency(
        (1, Gen.Elements<ushort>(0, 1, 127, 128, 255, 256, ushort.MaxValue)),
        (3, Gen.Choose(0, ushort.MaxValue).Select(v => (ushort)v)));

    public static readonly Gen<ushort> NonZeroPacketId = Gen.Frequency(
        (1, Gen.Elements<ushort>(1, 255, 256, ushort.MaxValue)),
        (3, Gen.Choose(1, ushort.MaxValue).Select(v => (ushort)v)));

    public static readonly Gen<uint> UInt32 = Gen.Frequency(
        (1, Gen.Elements(0u, 1u, 0xFFu, 0x100u, 0xFFFF_FFFFu, 0x8000_0000u)),
        (3, Gen.Choose(0, 0xFFFF).SelectMany(hi => Gen.Choose(0, 0xFFFF).Select(lo => ((uint)hi << 16) | (uint)lo))));

    /// <summary>1 .. 268,435,455: a variable byte integer of one to four bytes.</summary>
    public static readonly Gen<uint> SubscriptionIdentifier = Gen.Frequency(
        (1, Gen.Elements(1u, 127u, 128u, 16_383u, 16_384u, 2_097_151u, 2_097_152u, 268_435_455u)),
        (3, Gen.Choose(1, 268_435_455).Select(v => (uint)v)));

    public static readonly Gen<MqttQoS> QoS = Gen.Elements(MqttQoS.AtMostOnce, MqttQoS.AtLeastOnce, MqttQoS.ExactlyOnce);

    public static readonly Gen<ReadOnlyMemory<byte>> Binary =
        Gen.Sized(size => Gen.Choose(0, Math.Min(size, 40)))
            .SelectMany(n => Gen.ArrayOf(Gen.Choose(0, 255).Select(b => (byte)b), n))
            .Select(b => new ReadOnlyMemory<byte>(b));

    /// <summary>Mostly small; now and then a few hundred bytes so lengths take two bytes of VBI.</summary>
    public static readonly Gen<ReadOnlyMemory<byte>> Payload = Gen.Frequency(
        (6, Binary),
        (1, Gen.Choose(100, 600).SelectMany(n => Gen.ArrayOf(Gen.Choose(0, 255).Select(b => (byte)b), n)).Select(b => new ReadOnlyMemory<byte>(b))));

    /// <summary>
    /// Characters for UTF-8 strings: ASCII, two-, three- and four-byte sequences (the last as a
    /// surrogate pair), and control characters the standard allows (U+0001..U+001F); never U+0000
    /// [MQTT-1.5.4-2] nor a lone surrogate [MQTT-1.5.4-1].
    /// </summary>
    private static readonly Gen<string> TextElement = Gen.Frequency(
        (20, Gen.Elements("a", "b", "z", "0", "9", "-", "_", ".", " ", "A", "Q")),
        (3, Gen.Elements("é", "ß", "ж", "ü")),
        (3, Gen.Elements("中", "水", "€", "\uFEFF", "\uFFFD")),
        (2, Gen.Elements("😀", "𝄞", "\U0010FFFF")),
        (1, Gen.Elements("\u0001", "\t", "\u001F", "\u007F")));

    private static Gen<string> TextOf(Gen<string> element, int minElements) =>
        Gen.Frequency(
            (8, Gen.Sized(size => Gen.Choose(minElements, Math.Max(minElements, Math.Min(size, 24))))),
            (1, Gen.Choose(Math.Max(minElements, 120), 300)))
        .SelectMany(n => Gen.ListOf(element, n))
        .Select(parts => string.Concat(parts));

    public static readonly Gen<string> Text = TextOf(TextElement, 0);

    private static readonly Gen<string> TopicLevel = TextOf(TextElement.Where(e => e != "/"), 0);

    /// <summary>A topic name: at least one character, no wildcard [MQTT-4.7.3-1], [MQTT-3.3.2-2].</summary>
    public static readonly Gen<string> TopicName =
        Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(TopicLevel, n))
            .Select(levels => string.Join("/", levels))
            .Where(t => t.Length > 0);

    /// <summary>A topic filter: levels with '+' and a trailing '#', as section 4.7.1 allows.</summary>
    public static readonly Gen<string> TopicFilter =
        from levels in Gen.Choose(1, 4).SelectMany(n => Gen.ListOf(Gen.Frequency((4, TopicLevel), (1, Gen.Constant("+"))), n))
        from multi in Gen.Frequency((3, Gen.Constant(false)), (1, Gen.Constant(true)))
        let filter = string.Join("/", multi ? [.. levels, "#"] : levels)
        where filter.Length > 0
        select filter;

    public static readonly Gen<MqttUserProperty> UserProperty =
        from name in Text
        from value in Text
        select new MqttUserProperty(name, value);

    private static Gen<T?> Optional<T>(Gen<T> gen)
        where T : class =>
        Gen.Frequency((1, Gen.Constant<T?>(null)), (1, gen.Select(v => (T?)v)));

    private static Gen<ReadOnlyMemory<byte>?> Optional(Gen<ReadOnlyMemory<byte>> gen) =>
        Gen.Frequency((1, Gen.Constant<ReadOnlyMemory<byte>?>(null)), (1, gen.Select(v => (ReadOnlyMemory<byte>?)v)));

    /// <summary>The UTF-8 length, for tests that need it.</summary>
    public static int Utf8Length(string s) => Encoding.UTF8.GetByteCount(s);
}

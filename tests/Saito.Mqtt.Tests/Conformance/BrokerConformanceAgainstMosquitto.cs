using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>The broker behaviour tests against Mosquitto, the reference broker.</summary>
[Collection(MosquittoCollection.Name)]
public sealed class BrokerConformanceAgainstMosquitto(MosquittoFixture mosquitto, SizeLimitedMosquittoFixture sizeLimited)
    : BrokerConformanceTests(mosquitto.Endpoint), IClassFixture<SizeLimitedMosquittoFixture>
{
    protected override SizeLimitedBroker? BrokerWithMaximumPacketSize =>
        new(sizeLimited.Endpoint, SizeLimitedMosquittoFixture.MaximumPacketSize);

    // Measured against 2.0.11: a silent client with Keep Alive 1 s is closed 3.4 to 5.6 s after
    // its last packet (3.1.1 and 5.0 alike), not within the 1.5 s of [MQTT-3.1.2-24] / 5.0
    // [MQTT-3.1.2-22]; Mosquitto checks keep alive on a coarse timer.
    protected override string? KeepAliveDeviation =>
        "Mosquitto 2.0.11 closes a silent Keep Alive 1 s client after 3.4-5.6 s, not 1.5 s ([MQTT-3.1.2-24] / 5.0 [MQTT-3.1.2-22])";

    // Measured against 2.0.11: on takeover the old 5.0 connection is closed without any
    // DISCONNECT ("Client … already connected, closing old connection" in its log).
    protected override string? SessionTakeoverDeviation =>
        "Mosquitto 2.0.11 closes the taken-over 5.0 connection without DISCONNECT 0x8E (5.0 [MQTT-3.1.4-3])";

    // Measured against 2.0.11: PINGREQ 0xC1 is answered with PINGRESP; PUBACK 0x41, PUBREC 0x51
    // and PUBCOMP 0x71 are processed. It does check SUBSCRIBE, UNSUBSCRIBE, PUBREL and PUBLISH QoS 3.
    protected override string? ReservedFlagsOfSimplePacketsDeviation =>
        "Mosquitto 2.0.11 ignores the reserved flags of PINGREQ, PUBACK, PUBREC and PUBCOMP instead of closing (3.1.1 [MQTT-2.2.2-2] / 5.0 [MQTT-2.1.3-1])";

    // Measured against 2.0.11 with Receive Maximum 2 and six QoS 1 messages queued: two are
    // sent; after the first PUBACK two more come (three unacknowledged), after the next two more (four).
    protected override string? ReceiveMaximumDeviation =>
        "Mosquitto 2.0.11 exceeds a client's Receive Maximum 2 once acknowledgements start (3, then 4 unacknowledged) (5.0 [MQTT-3.3.4-9])";

    // Measured against 2.0.11: a 3.1.1 client with overlapping subscriptions gets one copy at the
    // QoS of the first subscription Mosquitto's topic tree matches: filters a/+ (QoS 1) and
    // +/b (QoS 2), message a/b at QoS 2, delivered at QoS 1. 5.0 clients get one copy per subscription.
    protected override string? OverlappingSubscriptionsDeviation =>
        "Mosquitto 2.0.11 sends a 3.1.1 client one copy at the QoS of the first matching subscription, not the highest ([MQTT-3.3.5-1])";

    // Measured against 2.0.11: with Maximum Packet Size 256 and Receive Maximum 1, after one
    // oversize QoS 1 message is dropped nothing more is ever delivered on that connection.
    protected override string? DroppedMessageHoldsReceiveMaximumSlotDeviation =>
        "Mosquitto 2.0.11 keeps a QoS 1 message dropped for the client's Maximum Packet Size in flight, so Receive Maximum 1 blocks all later messages (5.0 [MQTT-3.1.2-25])";
}

/// <summary>
/// A second Mosquitto whose <c>max_packet_size</c> is small, for the one test about packets too
/// large for the broker: the shared instance has no limit (and other tests need none).
/// </summary>
public sealed class SizeLimitedMosquittoFixture : IAsyncLifetime
{
    public const int MaximumPacketSize = 4096;

    private MosquittoInstance? _instance;

    public BrokerEndpoint Endpoint => (_instance ?? throw new InvalidOperationException("Mosquitto not started")).Endpoint;

    public async ValueTask InitializeAsync() => _instance = await MosquittoInstance.StartAsync($"max_packet_size {MaximumPacketSize}");

    public async ValueTask DisposeAsync()
    {
        if (_instance is not null)
        {
            await _instance.DisposeAsync();
        }
    }
}

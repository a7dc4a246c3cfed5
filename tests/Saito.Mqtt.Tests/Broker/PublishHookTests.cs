using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>The ingestion hook decides when a publish is acknowledged (the heart of "acknowledged only when durable").</summary>
public sealed class PublishHookTests : IAsyncLifetime
{
    private readonly HeldHook _hook = new();
    private SaitoHost _saito = null!;

    public async ValueTask InitializeAsync() =>
        _saito = await SaitoHost.StartAsync(["Mqtt:ReceiveMaximum=3"], b => b.Services.AddSingleton<IMqttPublishHook>(_hook));

    public async ValueTask DisposeAsync()
    {
        _hook.ReleaseAll();
        await _saito.DisposeAsync();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task Puback_is_held_until_the_hook_releases_it(MqttProtocolVersion version)
    {
        await using var client = await ConnectedAsync(version);
        await client.SendAsync(Publish("hook/held", 7, MqttQoS.AtLeastOnce));

        var call = await _hook.NextCallAsync();
        call.Publish.Topic.ShouldBe("hook/held");
        call.Publish.Payload.ToArray().ShouldBe("payload-7"u8.ToArray());
        await client.ExpectNothingAsync(TimeSpan.FromMilliseconds(400));

        call.Release(MqttPublishVerdict.Accepted);
        var ack = await client.ExpectAsync<PublishAckPacket>();
        ack.Type.ShouldBe(MqttPacketType.PubAck);
        ack.PacketId.ShouldBe((ushort)7);
    }

    [Fact]
    public async Task Pubrec_of_a_qos2_publish_is_held_until_the_hook_releases_it()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V500);
        await client.SendAsync(Publish("hook/qos2", 9, MqttQoS.ExactlyOnce));
        var call = await _hook.NextCallAsync();
        await client.ExpectNothingAsync(TimeSpan.FromMilliseconds(300));

        call.Release(MqttPublishVerdict.Accepted);
        var rec = await client.ExpectAsync<PublishAckPacket>();
        rec.Type.ShouldBe(MqttPacketType.PubRec);
        await client.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 9 });
        var comp = await client.ExpectAsync<PublishAckPacket>();
        comp.Type.ShouldBe(MqttPacketType.PubComp);
        comp.ReasonCode.ShouldBe(MqttReasonCode.Success);
    }

    [Fact]
    public async Task Acknowledgements_leave_in_arrival_order_whatever_order_verdicts_come_in()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V500);
        for (ushort id = 1; id <= 3; id++)
        {
            await client.SendAsync(Publish("hook/order", id, MqttQoS.AtLeastOnce));
        }

        var calls = new[] { await _hook.NextCallAsync(), await _hook.NextCallAsync(), await _hook.NextCallAsync() };
        calls[2].Release(MqttPublishVerdict.Accepted);
        calls[1].Release(MqttPublishVerdict.Accepted);
        await client.ExpectNothingAsync(TimeSpan.FromMilliseconds(300));

        calls[0].Release(MqttPublishVerdict.Accepted);
        for (ushort id = 1; id <= 3; id++)
        {
            (await client.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe(id);
        }
    }

    [Fact]
    public async Task The_connection_keeps_reading_while_verdicts_are_pending()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V311);
        await client.SendAsync(Publish("hook/reading", 1, MqttQoS.AtLeastOnce));
        await client.SendAsync(Publish("hook/reading", 2, MqttQoS.AtLeastOnce));
        await client.SendAsync(PingReqPacket.Instance);

        (await client.ExpectAsync<PingRespPacket>()).ShouldNotBeNull();
        var first = await _hook.NextCallAsync();
        var second = await _hook.NextCallAsync();
        first.Release(MqttPublishVerdict.Accepted);
        second.Release(MqttPublishVerdict.Accepted);
        (await client.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe((ushort)1);
        (await client.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe((ushort)2);
    }

    [Fact]
    public async Task Reading_stops_at_the_receive_maximum_until_a_verdict_frees_a_place()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V311);
        for (ushort id = 1; id <= 4; id++)
        {
            await client.SendAsync(Publish("hook/window", id, MqttQoS.AtLeastOnce));
        }

        var calls = new List<HeldHook.Call> { await _hook.NextCallAsync(), await _hook.NextCallAsync(), await _hook.NextCallAsync() };
        (await _hook.TryNextCallAsync(TimeSpan.FromMilliseconds(400))).ShouldBeNull("the fourth publish must wait: receive maximum is 3");

        calls[0].Release(MqttPublishVerdict.Accepted);
        var fourth = await _hook.NextCallAsync();
        fourth.Publish.Payload.ToArray().ShouldBe("payload-4"u8.ToArray());
        foreach (var call in calls.Skip(1).Append(fourth))
        {
            call.Release(MqttPublishVerdict.Accepted);
        }

        for (ushort id = 1; id <= 4; id++)
        {
            (await client.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe(id);
        }
    }

    [Fact]
    public async Task A_failed_verdict_is_the_reason_code_a_5_0_client_gets()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V500);
        await client.SendAsync(Publish("hook/fail", 5, MqttQoS.AtLeastOnce));
        (await _hook.NextCallAsync()).Release(MqttPublishVerdict.Failed(MqttReasonCode.QuotaExceeded, "database unavailable"));

        var ack = await client.ExpectAsync<PublishAckPacket>();
        ack.PacketId.ShouldBe((ushort)5);
        ack.ReasonCode.ShouldBe(MqttReasonCode.QuotaExceeded);
        ack.Properties?.ReasonString.ShouldBe("database unavailable");

        // The connection carries on.
        await client.SendAsync(PingReqPacket.Instance);
        await client.ExpectAsync<PingRespPacket>();
    }

    [Fact]
    public async Task A_hook_that_throws_fails_the_publish_without_harming_the_broker()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V500);
        await client.SendAsync(Publish("hook/throw", 6, MqttQoS.AtLeastOnce));
        (await _hook.NextCallAsync()).Throw(new InvalidOperationException("boom"));

        (await client.ExpectAsync<PublishAckPacket>()).ReasonCode.ShouldBe(MqttReasonCode.UnspecifiedError);
        await client.SendAsync(Publish("hook/throw", 7, MqttQoS.AtLeastOnce));
        (await _hook.NextCallAsync()).Release(MqttPublishVerdict.Accepted);
        (await client.ExpectAsync<PublishAckPacket>()).ReasonCode.ShouldBe(MqttReasonCode.Success);
    }

    [Fact]
    public async Task A_failed_verdict_closes_a_3_1_1_connection_unacknowledged_so_the_client_sends_again()
    {
        await using var client = await ConnectedAsync(MqttProtocolVersion.V311);
        await client.SendAsync(Publish("hook/fail311", 3, MqttQoS.AtLeastOnce));
        (await _hook.NextCallAsync()).Release(MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError));

        (await client.ExpectClosedAsync()).ShouldBeNull("3.1.1 has no DISCONNECT from the server and no failure PUBACK");
    }

    private async Task<RawMqttConnection> ConnectedAsync(MqttProtocolVersion version)
    {
        var connection = await RawMqttConnection.OpenAsync(_saito.Endpoint, TestContext.Current.CancellationToken);
        (await connection.ConnectAsync(version, "hook-" + Guid.NewGuid().ToString("N")[..12], keepAliveSeconds: 30)).ReasonCode.ShouldBe((byte)0);
        return connection;
    }

    private static PublishPacket Publish(string topic, ushort id, MqttQoS qos) => new()
    {
        Topic = topic,
        Payload = System.Text.Encoding.UTF8.GetBytes($"payload-{id}"),
        QoS = qos,
        PacketId = id,
    };

    /// <summary>A hook whose verdicts the test gives by hand, one publish at a time.</summary>
    private sealed class HeldHook : IMqttPublishHook
    {
        private readonly Channel<Call> _calls = Channel.CreateUnbounded<Call>();
        private readonly ConcurrentBag<Call> _all = [];

        public ValueTask<MqttPublishVerdict> OnPublishAsync(MqttInboundPublish publish, CancellationToken cancellationToken)
        {
            var call = new Call(publish);
            _all.Add(call);
            _calls.Writer.TryWrite(call);
            return new ValueTask<MqttPublishVerdict>(call.Verdict.Task);
        }

        public async Task<Call> NextCallAsync() =>
            await TryNextCallAsync(TimeSpan.FromSeconds(5)) ?? throw new TimeoutException("The hook was not called");

        public async Task<Call?> TryNextCallAsync(TimeSpan timeout)
        {
            using var cts = new CancellationTokenSource(timeout);
            try
            {
                return await _calls.Reader.ReadAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                return null;
            }
        }

        public void ReleaseAll()
        {
            foreach (var call in _all)
            {
                call.Verdict.TrySetResult(MqttPublishVerdict.Accepted);
            }
        }

        public sealed class Call(MqttInboundPublish publish)
        {
            public MqttInboundPublish Publish { get; } = publish;
            public TaskCompletionSource<MqttPublishVerdict> Verdict { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

            public void Release(MqttPublishVerdict verdict) => Verdict.SetResult(verdict);

            public void Throw(Exception exception) => Verdict.SetException(exception);
        }
    }
}

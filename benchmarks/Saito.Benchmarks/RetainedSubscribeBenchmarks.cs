using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Benchmarks;

/// <summary>
/// What one filter of a SUBSCRIBE costs the broker in finding the retained messages it matches, with the store full
/// (<see cref="MqttBrokerOptions.MaxRetainedMessages"/>, 100,000 topics of 16 hubs' devices). From a review: every
/// filter scanned the whole store, so 100 filters that matched nothing cost 0.84 s of CPU.
/// </summary>
[MemoryDiagnoser]
public class RetainedSubscribeBenchmarks
{
    private ServiceProvider? _services;
    private MqttBrokerMetrics? _metrics;
    private MqttRetainedMessageStore? _store;

    /// <summary>A literal filter that matches nothing; a wildcard one that matches nothing; one hub's heart rates (6,250).</summary>
    [Params("other/x/y/z", "saito/+/nope/+", "saito/hub-3/+/biosensor")]
    public string Filter { get; set; } = "";

    [GlobalSetup]
    public void Setup()
    {
        _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
        _metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        _store = new MqttRetainedMessageStore(new MqttBrokerOptions(), _metrics);
        byte[] payload = "{\"hr\":72}"u8.ToArray();
        for (int i = 0; i < 100_000; i++)
        {
            _store.Store(new MqttMessage { Topic = $"saito/hub-{i % 16}/wrist-{i}/biosensor", Payload = payload, QoS = MqttQoS.AtLeastOnce, Retain = true });
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _metrics?.Dispose();
        _services?.Dispose();
    }

    [Benchmark]
    public int Subscribe()
    {
        int n = 0;
        foreach (var _ in _store!.ForSubscription(new MqttSubscription { TopicFilter = Filter, QoS = MqttQoS.AtLeastOnce }, 0))
        {
            n++;
        }

        return n;
    }
}

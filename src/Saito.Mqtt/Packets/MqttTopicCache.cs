using System.Collections.Concurrent;

namespace Saito.Mqtt.Packets;

/// <summary>
/// Interns topic strings so that a hub publishing to the same few topics all day does not allocate a
/// new string per message. Bounded: past <see cref="Capacity"/> entries new topics are returned
/// without being cached, so a client inventing topics cannot grow it without limit.
/// </summary>
public sealed class MqttTopicCache
{
    private readonly ConcurrentDictionary<string, string> _topics = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, string>.AlternateLookup<ReadOnlySpan<char>> _lookup;

    public MqttTopicCache(int capacity = 16_384)
    {
        Capacity = capacity;
        _lookup = _topics.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    public int Capacity { get; }

    public int Count => _topics.Count;

    public string GetOrAdd(ReadOnlySpan<char> topic)
    {
        if (_lookup.TryGetValue(topic, out var cached))
        {
            return cached;
        }

        var created = new string(topic);
        if (_topics.Count < Capacity)
        {
            _topics.TryAdd(created, created);
        }

        return created;
    }
}

using System.Collections.Concurrent;

namespace Saito.Mqtt.Packets;

/// <summary>
/// Interns topic strings so that a hub publishing to the same few topics all day does not allocate a
/// new string per message. Bounded in entries and in characters: past <see cref="Capacity"/> entries or
/// <see cref="MaxChars"/> characters new topics are returned without being cached, so a client inventing
/// (long) topics cannot grow it without limit.
/// </summary>
public sealed class MqttTopicCache
{
    private readonly ConcurrentDictionary<string, string> _topics = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, string>.AlternateLookup<ReadOnlySpan<char>> _lookup;

    private long _chars;

    public MqttTopicCache(int capacity = 16_384, long maxChars = 1_048_576)
    {
        Capacity = capacity;
        MaxChars = maxChars;
        _lookup = _topics.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    public int Capacity { get; }

    /// <summary>Characters of cached topics at most (2 MB of strings by default).</summary>
    public long MaxChars { get; }

    public long Chars => Interlocked.Read(ref _chars);

    public int Count => _topics.Count;

    public string GetOrAdd(ReadOnlySpan<char> topic)
    {
        if (_lookup.TryGetValue(topic, out var cached))
        {
            return cached;
        }

        var created = new string(topic);
        if (_topics.Count < Capacity && Interlocked.Read(ref _chars) + created.Length <= MaxChars && _topics.TryAdd(created, created))
        {
            Interlocked.Add(ref _chars, created.Length);
        }

        return created;
    }
}

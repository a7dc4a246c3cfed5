namespace Saito.Mqtt.Broker;

/// <summary>
/// The retained topics as a tree of topic levels, to find those a filter matches by walking only the levels the filter
/// names (MQTT 5.0 4.7: <c>+</c> one level, <c>#</c> the parent level and every level below, and neither as a first level
/// matches a topic that starts with <c>$</c>). Not thread-safe: <see cref="MqttRetainedMessageStore"/> holds a lock.
/// Nodes no topic passes through are removed, so the tree holds at most the levels of the topics held.
/// </summary>
internal sealed class RetainedTopicIndex
{
    private readonly Node _root = new(null, "");

    /// <summary>Levels held (the root excluded), for tests.</summary>
    public int NodeCount { get; private set; }

    public void Add(string topic)
    {
        var node = _root;
        foreach (var level in topic.Split('/'))
        {
            node.Children ??= new Dictionary<string, Node>(StringComparer.Ordinal);
            if (!node.Children.TryGetValue(level, out var child))
            {
                child = new Node(node, level);
                node.Children.Add(level, child);
                NodeCount++;
            }

            node = child;
        }

        node.Topic = topic;
    }

    public void Remove(string topic)
    {
        var node = _root;
        foreach (var level in topic.Split('/'))
        {
            if (node.Children is null || !node.Children.TryGetValue(level, out node))
            {
                return;
            }
        }

        node.Topic = null;
        while (node.Parent is { } parent && node.Topic is null && (node.Children is null || node.Children.Count == 0))
        {
            parent.Children!.Remove(node.Level);
            NodeCount--;
            node = parent;
        }
    }

    /// <summary>Calls <paramref name="visit"/> with each topic <paramref name="filter"/> matches, until it answers false.</summary>
    public void Match(string filter, Func<string, bool> visit)
    {
        ArgumentNullException.ThrowIfNull(filter);
        ArgumentNullException.ThrowIfNull(visit);
        Match(_root, filter.Split('/'), 0, visit);
    }

    private static bool Match(Node node, string[] levels, int index, Func<string, bool> visit)
    {
        if (index == levels.Length)
        {
            return node.Topic is null || visit(node.Topic);
        }

        string level = levels[index];
        if (level == "#")
        {
            // "a/#" matches "a" itself as well as everything below it.
            if (index > 0 && node.Topic is not null && !visit(node.Topic))
            {
                return false;
            }

            return node.Children is null || node.Children.Values.Where(c => index > 0 || !c.Level.StartsWith('$')).All(c => All(c, visit));
        }

        if (node.Children is null)
        {
            return true;
        }

        if (level == "+")
        {
            foreach (var child in node.Children.Values)
            {
                if ((index > 0 || !child.Level.StartsWith('$')) && !Match(child, levels, index + 1, visit))
                {
                    return false;
                }
            }

            return true;
        }

        return !node.Children.TryGetValue(level, out var next) || Match(next, levels, index + 1, visit);
    }

    /// <summary>Every topic at or below <paramref name="node"/>.</summary>
    private static bool All(Node node, Func<string, bool> visit)
    {
        if (node.Topic is not null && !visit(node.Topic))
        {
            return false;
        }

        return node.Children is null || node.Children.Values.All(c => All(c, visit));
    }

    private sealed class Node(Node? parent, string level)
    {
        public Node? Parent { get; } = parent;

        public string Level { get; } = level;

        public Dictionary<string, Node>? Children { get; set; }

        public string? Topic { get; set; }
    }
}

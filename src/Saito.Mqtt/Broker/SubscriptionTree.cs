using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>One session's subscription at one node of the tree.</summary>
internal sealed record Subscriber(MqttSession Session, MqttQoS QoS, bool NoLocal, bool RetainAsPublished, uint SubscriptionId);

/// <summary>
/// Topic filters as a tree of levels, so that matching a topic costs its depth, not the number of
/// subscriptions. Shared subscriptions hang off the node of their inner filter, one group per name,
/// and each message goes to one member of each group (round robin, connected members first).
/// Reads (every publish) take a read lock; subscribe and unsubscribe take the write lock.
/// </summary>
internal sealed class SubscriptionTree : IDisposable
{
    [ThreadStatic]
    private static Stack<(Node Node, int Start)>? t_pending;

    private readonly Node _root = new();
    private readonly ReaderWriterLockSlim _lock = new(LockRecursionPolicy.NoRecursion);

    /// <summary>Adds or replaces the session's subscription; returns true when it is new.</summary>
    public bool Add(string filter, string? shareGroup, Subscriber subscriber)
    {
        _lock.EnterWriteLock();
        try
        {
            var node = Walk(filter, create: true)!;
            List<Subscriber> list;
            if (shareGroup is null)
            {
                list = node.Subscribers;
            }
            else
            {
                node.Shared ??= new Dictionary<string, SharedGroup>(StringComparer.Ordinal);
                if (!node.Shared.TryGetValue(shareGroup, out var group))
                {
                    node.Shared[shareGroup] = group = new SharedGroup();
                }

                list = group.Members;
            }

            int index = list.FindIndex(s => ReferenceEquals(s.Session, subscriber.Session));
            if (index >= 0)
            {
                list[index] = subscriber;
                return false;
            }

            list.Add(subscriber);
            return true;
        }
        finally
        {
            _lock.ExitWriteLock();
        }
    }

    public bool Remove(string filter, string? shareGroup, MqttSession session)
    {
        _lock.EnterWriteLock();
        try
        {
            var node = Walk(filter, create: false);
            if (node is null)
            {
                return false;
            }

            bool removed;
            if (shareGroup is null)
            {
                removed = node.Subscribers.RemoveAll(s => ReferenceEquals(s.Session, session)) > 0;
            }
            else
            {
                if (node.Shared is null || !node.Shared.TryGetValue(shareGroup, out var group))
                {
                    return false;
                }

                removed = group.Members.RemoveAll(s => ReferenceEquals(s.Session, session)) > 0;
                if (group.Members.Count == 0)
                {
                    node.Shared.Remove(shareGroup);
                }
            }

            Prune(filter);
            return removed;
        }
        finally
        {
            _lock.ExitWriteLock();
        }
    }

    /// <summary>Adds every subscriber whose filter matches <paramref name="topic"/> to <paramref name="results"/>.</summary>
    /// <remarks>
    /// Iterative, with an explicit stack: the work is bounded by the nodes the topic can reach and no call depth grows
    /// with the topic a client sends (a topic or filter with tens of thousands of levels once overflowed the stack here).
    /// </remarks>
    public void Match(string topic, List<Subscriber> results)
    {
        var pending = t_pending ??= new Stack<(Node Node, int Start)>();
        pending.Clear();
        bool dollarRoot = topic.Length > 0 && topic[0] == '$';
        _lock.EnterReadLock();
        try
        {
            pending.Push((_root, 0));
            while (pending.TryPop(out var item))
            {
                var (node, start) = item;
                if (start < 0)
                {
                    AddAll(node, results);

                    // "a/#" matches "a" too.
                    if (node.Hash is not null)
                    {
                        AddAll(node.Hash, results);
                    }

                    continue;
                }

                // Wildcards in the first level do not match topics that begin with '$' [MQTT-4.7.2-1].
                bool wildcards = start > 0 || !dollarRoot;
                int end = topic.IndexOf('/', start);
                int next = end < 0 ? -1 : end + 1;
                if (wildcards)
                {
                    if (node.Hash is not null)
                    {
                        AddAll(node.Hash, results);
                    }

                    if (node.Plus is not null)
                    {
                        pending.Push((node.Plus, next));
                    }
                }

                if (node.Children is not null)
                {
                    var level = end < 0 ? topic.AsSpan(start) : topic.AsSpan(start, end - start);
                    if (node.ChildrenLookup.TryGetValue(level, out var child))
                    {
                        pending.Push((child, next));
                    }
                }
            }
        }
        finally
        {
            _lock.ExitReadLock();
            pending.Clear();
        }
    }

    private static void AddAll(Node node, List<Subscriber> results)
    {
        results.AddRange(node.Subscribers);
        if (node.Shared is null)
        {
            return;
        }

        foreach (var group in node.Shared.Values)
        {
            if (group.Pick() is { } member)
            {
                results.Add(member);
            }
        }
    }

    /// <summary>Number of nodes below the root (for tests: a tree whose subscriptions are all gone has none).</summary>
    internal int NodeCount
    {
        get
        {
            _lock.EnterReadLock();
            try
            {
                int count = 0;
                var pending = new Stack<Node>();
                pending.Push(_root);
                while (pending.TryPop(out var node))
                {
                    foreach (var child in Below(node))
                    {
                        count++;
                        pending.Push(child);
                    }
                }

                return count;
            }
            finally
            {
                _lock.ExitReadLock();
            }
        }
    }

    private static IEnumerable<Node> Below(Node node)
    {
        if (node.Children is not null)
        {
            foreach (var child in node.Children.Values)
            {
                yield return child;
            }
        }

        if (node.Plus is not null)
        {
            yield return node.Plus;
        }

        if (node.Hash is not null)
        {
            yield return node.Hash;
        }
    }

    /// <summary>
    /// Takes away the nodes of <paramref name="filter"/>'s path that no longer hold anything, deepest first (under the
    /// write lock): without it every filter ever subscribed kept its nodes, and a client subscribing and unsubscribing
    /// new filters grew the tree without bound.
    /// </summary>
    private void Prune(string filter)
    {
        var path = new List<(Node Parent, string Level)>();
        var node = _root;
        foreach (var level in filter.Split('/'))
        {
            Node? next = level switch
            {
                "+" => node.Plus,
                "#" => node.Hash,
                _ => node.Children is not null && node.Children.TryGetValue(level, out var child) ? child : null,
            };
            if (next is null)
            {
                return;
            }

            path.Add((node, level));
            node = next;
        }

        for (int i = path.Count - 1; i >= 0; i--)
        {
            if (!node.IsEmpty)
            {
                return;
            }

            var (parent, level) = path[i];
            switch (level)
            {
                case "+":
                    parent.Plus = null;
                    break;
                case "#":
                    parent.Hash = null;
                    break;
                default:
                    parent.Children!.Remove(level);
                    if (parent.Children.Count == 0)
                    {
                        parent.Children = null;
                    }

                    break;
            }

            node = parent;
        }
    }

    private Node? Walk(string filter, bool create)
    {
        var node = _root;
        foreach (var level in filter.Split('/'))
        {
            Node? next = level switch
            {
                "+" => node.Plus ??= create ? new Node() : null,
                "#" => node.Hash ??= create ? new Node() : null,
                _ => Child(node, level, create),
            };
            if (next is null)
            {
                return null;
            }

            node = next;
        }

        return node;
    }

    private static Node? Child(Node node, string level, bool create)
    {
        if (node.Children is not null && node.Children.TryGetValue(level, out var child))
        {
            return child;
        }

        if (!create)
        {
            return null;
        }

        node.Children ??= new Dictionary<string, Node>(StringComparer.Ordinal);
        node.Children[level] = child = new Node();
        return child;
    }

    public void Dispose() => _lock.Dispose();

    private sealed class Node
    {
        private Dictionary<string, Node>? _children;

        public Dictionary<string, Node>? Children
        {
            get => _children;
            set
            {
                _children = value;
                ChildrenLookup = value is null ? default : value.GetAlternateLookup<ReadOnlySpan<char>>();
            }
        }

        public Dictionary<string, Node>.AlternateLookup<ReadOnlySpan<char>> ChildrenLookup { get; private set; }

        public Node? Plus { get; set; }
        public Node? Hash { get; set; }
        public List<Subscriber> Subscribers { get; } = [];
        public Dictionary<string, SharedGroup>? Shared { get; set; }

        /// <summary>No subscriber, no shared group and nothing below.</summary>
        public bool IsEmpty => Subscribers.Count == 0 && (Shared is null || Shared.Count == 0) && Children is null && Plus is null && Hash is null;
    }

    private sealed class SharedGroup
    {
        private int _next;

        public List<Subscriber> Members { get; } = [];

        /// <summary>The next member in turn, skipping members whose session is not connected (unless none is).</summary>
        public Subscriber? Pick()
        {
            int count = Members.Count;
            if (count == 0)
            {
                return null;
            }

            int start = (int)((uint)Interlocked.Increment(ref _next) % (uint)count);
            for (int i = 0; i < count; i++)
            {
                var candidate = Members[(start + i) % count];
                if (candidate.Session.Connection is not null)
                {
                    return candidate;
                }
            }

            return Members[start];
        }
    }
}

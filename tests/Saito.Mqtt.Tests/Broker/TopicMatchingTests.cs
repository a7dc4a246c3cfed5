using FsCheck;
using FsCheck.Fluent;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

public sealed class TopicMatchingTests
{
    [Theory]
    [InlineData("sport/tennis/player1/#", "sport/tennis/player1", true)]
    [InlineData("sport/tennis/player1/#", "sport/tennis/player1/ranking", true)]
    [InlineData("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true)]
    [InlineData("sport/#", "sport", true)]
    [InlineData("#", "sport/tennis", true)]
    [InlineData("sport/tennis/+", "sport/tennis/player1", true)]
    [InlineData("sport/tennis/+", "sport/tennis/player1/ranking", false)]
    [InlineData("sport/+", "sport", false)]
    [InlineData("sport/+", "sport/", true)]
    [InlineData("+/+", "/finance", true)]
    [InlineData("/+", "/finance", true)]
    [InlineData("+", "/finance", false)]
    [InlineData("#", "$SYS/broker/load", false)]
    [InlineData("+/monitor/Clients", "$SYS/monitor/Clients", false)]
    [InlineData("$SYS/#", "$SYS/monitor/Clients", true)]
    [InlineData("$SYS/monitor/+", "$SYS/monitor/Clients", true)]
    [InlineData("a/b", "a/b", true)]
    [InlineData("a/b", "a/B", false)]
    [InlineData("a//b", "a//b", true)]
    [InlineData("a/+/b", "a//b", true)]
    public void Filters_match_topics_as_the_standard_examples_say(string filter, string topic, bool expected)
    {
        // Examples of MQTT 3.1.1 section 4.7.1 and 4.7.2.
        MqttTopic.Matches(filter, topic).ShouldBe(expected);
        TreeMatches(filter, topic).ShouldBe(expected);
        RetainedIndexMatches(filter, topic).ShouldBe(expected);
    }

    [Theory]
    [InlineData("a/#/b")]
    [InlineData("a/b#")]
    [InlineData("a+/b")]
    [InlineData("")]
    [InlineData("a/##")]
    public void Malformed_filters_are_invalid(string filter) => MqttTopic.IsValidFilter(filter).ShouldBeFalse();

    [Theory]
    [InlineData("$share/g/a/+", "g", "a/+", true)]
    [InlineData("$share/g", "", "$share/g", false)]
    [InlineData("$share//a", "", "a", false)]
    [InlineData("$share/g+/a", "g+", "a", false)]
    public void Shared_filters_split_into_group_and_filter(string filter, string group, string inner, bool valid)
    {
        MqttTopic.TryParseShared(filter, out var g, out var f, out bool ok).ShouldBeTrue();
        ok.ShouldBe(valid);
        if (valid)
        {
            g.ShouldBe(group);
            f.ShouldBe(inner);
        }
    }

    [Fact]
    public void The_subscription_tree_matches_exactly_what_the_plain_matcher_matches()
    {
        var (topicGen, filterGen) = (RandomTopics, RandomFilters);

        Prop.ForAll(Arb.From(Gen.ListOf(filterGen).Where(l => l.Count < 8)), Arb.From(topicGen), (filters, topic) =>
        {
            using var tree = new SubscriptionTree();
            var sessions = filters.Select((f, i) => (Filter: f, Session: new MqttSession("c" + i))).ToList();
            foreach (var (filter, session) in sessions)
            {
                tree.Add(filter, null, new Subscriber(session, MqttQoS.AtLeastOnce, false, false, 0));
            }

            var matches = new List<Subscriber>();
            tree.Match(topic, matches);
            var expected = sessions.Where(s => MqttTopic.Matches(s.Filter, topic)).Select(s => s.Session.ClientId).Order();
            return matches.Select(m => m.Session.ClientId).Order().SequenceEqual(expected);
        }).QuickCheckThrowOnFailure();
    }

    [Fact]
    public void The_retained_topic_index_finds_exactly_what_the_plain_matcher_matches_and_empties_when_its_topics_go()
    {
        var (topicGen, filterGen) = (RandomTopics, RandomFilters);

        Prop.ForAll(Arb.From(Gen.ListOf(topicGen).Where(l => l.Count < 12)), Arb.From(filterGen), (topics, filter) =>
        {
            var index = new RetainedTopicIndex();
            var held = topics.Distinct().ToList();
            held.ForEach(index.Add);
            var found = new List<string>();
            index.Match(filter, t => { found.Add(t); return true; });
            bool same = found.Order(StringComparer.Ordinal).SequenceEqual(held.Where(t => MqttTopic.Matches(filter, t)).Order(StringComparer.Ordinal));
            held.ForEach(index.Remove);
            return same && index.NodeCount == 0;
        }).QuickCheckThrowOnFailure();
    }

    [Fact]
    public void Unsubscribing_takes_away_the_nodes_no_filter_uses_and_keeps_the_ones_another_does()
    {
        // Every filter ever subscribed kept its nodes: a client subscribing and unsubscribing new deep filters grew the
        // tree (and the broker's memory) without bound.
        using var tree = new SubscriptionTree();
        var session = new MqttSession("c");
        var kept = new Subscriber(new MqttSession("k"), MqttQoS.AtLeastOnce, false, false, 0);
        tree.Add("a/b/c", null, kept);
        int before = tree.NodeCount;
        for (int round = 0; round < 50; round++)
        {
            string[] filters = [$"a/b/{round}/x/y/+/#", $"a/+/{round}/z", $"r{round}/s/t", $"a/b/c/{round}"];
            foreach (string filter in filters)
            {
                tree.Add(filter, null, new Subscriber(session, MqttQoS.AtLeastOnce, false, false, 0));
                tree.Add(filter, "g", new Subscriber(session, MqttQoS.AtLeastOnce, false, false, 0));
            }

            foreach (string filter in filters)
            {
                tree.Remove(filter, null, session).ShouldBeTrue();
                tree.Remove(filter, "g", session).ShouldBeTrue();
            }
        }

        tree.NodeCount.ShouldBe(before);
        var results = new List<Subscriber>();
        tree.Match("a/b/c", results);
        results.ShouldBe([kept]);
        tree.Remove("a/b/c", null, kept.Session).ShouldBeTrue();
        tree.NodeCount.ShouldBe(0);
    }

    [Fact]
    public void A_shared_group_gives_each_message_to_one_member_in_turn()
    {
        using var tree = new SubscriptionTree();
        var a = new MqttSession("a");
        var b = new MqttSession("b");
        tree.Add("t/+", "g", new Subscriber(a, MqttQoS.AtLeastOnce, false, false, 0));
        tree.Add("t/+", "g", new Subscriber(b, MqttQoS.AtLeastOnce, false, false, 0));
        var picked = new List<string>();
        for (int i = 0; i < 10; i++)
        {
            var matches = new List<Subscriber>();
            tree.Match("t/1", matches);
            matches.Count.ShouldBe(1);
            picked.Add(matches[0].Session.ClientId);
        }

        picked.Count(p => p == "a").ShouldBe(5);
        picked.Count(p => p == "b").ShouldBe(5);
    }

    [Fact]
    public void Removing_a_subscription_stops_matches()
    {
        using var tree = new SubscriptionTree();
        var a = new MqttSession("a");
        tree.Add("x/#", null, new Subscriber(a, MqttQoS.AtMostOnce, false, false, 0)).ShouldBeTrue();
        tree.Add("x/#", null, new Subscriber(a, MqttQoS.AtLeastOnce, false, false, 0)).ShouldBeFalse();
        tree.Remove("x/#", null, a).ShouldBeTrue();
        var matches = new List<Subscriber>();
        tree.Match("x/y", matches);
        matches.ShouldBeEmpty();
    }

    // Small alphabets so that random filters and topics collide often.
    private static Gen<string> RandomTopics =>
        Gen.ListOf(Gen.Elements("a", "b", "", "$x")).Where(l => l.Count is > 0 and < 5).Select(l => string.Join('/', l));

    private static Gen<string> RandomFilters =>
        from levels in Gen.ListOf(Gen.Elements("a", "b", "", "+", "$x")).Where(l => l.Count is > 0 and < 5)
        from hash in Gen.Elements(true, false)
        select string.Join('/', hash ? [.. levels, "#"] : levels);

    private static bool RetainedIndexMatches(string filter, string topic)
    {
        var index = new RetainedTopicIndex();
        index.Add(topic);
        int found = 0;
        index.Match(filter, _ => { found++; return true; });
        return found == 1;
    }

    private static bool TreeMatches(string filter, string topic)
    {
        using var tree = new SubscriptionTree();
        tree.Add(filter, null, new Subscriber(new MqttSession("c"), MqttQoS.AtMostOnce, false, false, 0));
        var matches = new List<Subscriber>();
        tree.Match(topic, matches);
        return matches.Count == 1;
    }
}

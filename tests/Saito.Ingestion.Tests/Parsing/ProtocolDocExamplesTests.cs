using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Saito.Ingestion.Pipeline;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Payloads;
using Saito.Readings;

namespace Saito.Ingestion.Tests.Parsing;

/// <summary>
/// docs/protocol.md cannot drift from the parser: every example in it is marked
/// (<c>&lt;!-- example: topic=... accepted=N rejected=N reasons=a,b --&gt;</c> before a fenced block) and run here.
/// A <c>json</c> block is the payload as written; a <c>sh</c> block is one <c>mosquitto_pub</c> whose <c>-t</c>,
/// <c>-m '...'</c> and <c>-D publish content-type</c> are what is checked, so what users copy is what is tested.
/// </summary>
public sealed partial class ProtocolDocExamplesTests
{
    public sealed record DocExample(int Line, IReadOnlyDictionary<string, string> Attributes, string Language, string Body)
    {
        public override string ToString() => $"docs/protocol.md line {Line}";
    }

    private static readonly Lazy<(IReadOnlyList<DocExample> Examples, DateTime ReceivedAt, string[] Lines)> Doc = new(Load);

    public static TheoryData<DocExample> Examples => new(Doc.Value.Examples);

    [Fact]
    public void The_protocol_doc_has_examples()
    {
        Doc.Value.Examples.Count.ShouldBeGreaterThanOrEqualTo(20, "the examples were not found: is the marker format still <!-- example: ... -->?");
    }

    [Theory]
    [MemberData(nameof(Examples))]
    public void Each_example_in_the_protocol_doc_gives_the_outcome_it_states(DocExample example)
    {
        var (topic, payload, contentType) = Extract(example);
        var options = new IngestionOptions();
        if (example.Attributes.TryGetValue("max-readings", out string? maxReadings))
        {
            options.MaxReadingsPerMessage = int.Parse(maxReadings, CultureInfo.InvariantCulture);
        }

        if (example.Attributes.TryGetValue("max-dead-letters", out string? maxDeadLetters))
        {
            options.MaxDeadLettersPerMessage = int.Parse(maxDeadLetters, CultureInfo.InvariantCulture);
        }

        if (example.Attributes.TryGetValue("max-new-devices", out string? maxNewDevices))
        {
            options.MaxNewDevicesPerHubPerHour = int.Parse(maxNewDevices, CultureInfo.InvariantCulture);
        }

        if (example.Attributes.TryGetValue("max-payload-bytes", out string? maxBytes))
        {
            options.MaxPayloadBytes = int.Parse(maxBytes, CultureInfo.InvariantCulture);
        }

        int newDevicesThisHour = example.Attributes.TryGetValue("new-devices-this-hour", out string? registered)
            ? int.Parse(registered, CultureInfo.InvariantCulture)
            : 0;
        var (accepted, rejected, reasons) = Run(topic, Encoding.UTF8.GetBytes(payload), contentType, options, Doc.Value.ReceivedAt, newDevicesThisHour, example.Attributes);

        string outcome = $"accepted={accepted} rejected={rejected} reasons={string.Join(",", reasons)} for {payload}";
        accepted.ShouldBe(int.Parse(example.Attributes["accepted"], CultureInfo.InvariantCulture), outcome);
        rejected.ShouldBe(int.Parse(example.Attributes["rejected"], CultureInfo.InvariantCulture), outcome);
        if (rejected > 0 || example.Attributes.ContainsKey("reasons"))
        {
            example.Attributes.ContainsKey("reasons").ShouldBeTrue("an example with rejections names them: reasons=a,b");
            reasons.ShouldBe(example.Attributes["reasons"].Split(','), outcome);
        }
    }

    [Fact]
    public void Every_reason_code_has_an_example_in_the_protocol_doc()
    {
        var documented = Doc.Value.Examples
            .Where(e => e.Attributes.ContainsKey("reasons"))
            .SelectMany(e => e.Attributes["reasons"].Split(','))
            .ToHashSet();

        DeadLetterReasons.All.Except(documented).ShouldBeEmpty();
    }

    [Fact]
    public void Every_json_block_and_every_mosquitto_pub_in_the_protocol_doc_is_a_checked_example()
    {
        var lines = Doc.Value.Lines;
        var checkedStarts = Doc.Value.Examples.Select(e => e.Line).ToHashSet();
        var unmarked = new List<string>();
        bool inBlock = false;
        for (int i = 0; i < lines.Length; i++)
        {
            if (!lines[i].StartsWith("```", StringComparison.Ordinal))
            {
                if (!inBlock && lines[i].Contains("mosquitto_pub", StringComparison.Ordinal) && !lines[i].Contains('`', StringComparison.Ordinal))
                {
                    unmarked.Add($"line {i + 1}: mosquitto_pub outside a code block");
                }

                continue;
            }

            if (!inBlock)
            {
                string language = lines[i][3..].Trim();
                int end = Array.FindIndex(lines, i + 1, l => l.StartsWith("```", StringComparison.Ordinal));
                bool publishes = lines[(i + 1)..end].Any(l => l.Contains("mosquitto_pub", StringComparison.Ordinal));
                if ((language == "json" || publishes) && !checkedStarts.Contains(i + 1))
                {
                    unmarked.Add($"line {i + 1}: a {language} block without an <!-- example: ... --> marker");
                }
            }

            inBlock = !inBlock;
        }

        unmarked.ShouldBeEmpty();
    }

    private static (int Accepted, int Rejected, IReadOnlyList<string> Reasons) Run(
        string topic, byte[] payload, string? contentType, IngestionOptions options, DateTime receivedAt, int newDevicesThisHour,
        IReadOnlyDictionary<string, string> attributes)
    {
        if (!SaitoTopicParser.TryParse(topic, options.TopicPrefix, out var parsed, out _))
        {
            return (0, 1, [DeadLetterReasons.BadTopic]);
        }

        // device-hub=north-1 sites=north-1:north,south-1:south: the device is registered, bound to north-1, and the hubs
        // have these sites (a hub not listed has none), judged by ingestion's own rule.
        if (attributes.TryGetValue("device-hub", out string? home))
        {
            var sites = new ListedHubSites();
            foreach (string[] pair in (attributes.TryGetValue("sites", out string? listed) ? listed.Split(',') : []).Select(p => p.Split(':')))
            {
                sites[pair[0]] = pair[1];
            }

            if (home != parsed.Hub && HubSiteRules.Refusal(sites, parsed, home) is not null)
            {
                return (0, 1, [DeadLetterReasons.DeviceOfAnotherSite]);
            }

            newDevicesThisHour = 0; // a registered device is not counted against its hub
        }

        // The example's device is new, and its hub registered newDevicesThisHour others in the last hour.
        var limiter = new Saito.Ingestion.Pipeline.NewDeviceLimiter(options.MaxNewDevicesPerHubPerHour, TimeProvider.System);
        for (int i = 0; i < newDevicesThisHour; i++)
        {
            limiter.TryAdmit(parsed.Hub).ShouldBeTrue();
        }

        if (!limiter.TryAdmit(parsed.Hub))
        {
            return (0, 1, [DeadLetterReasons.TooManyNewDevices]);
        }

        if (parsed.Kind == TopicKind.CheckIn)
        {
            // The registry's answer is stated by the example: known-owners=1,2 (the owners enrolled), checked-in=none, registry=down.
            if (!CheckInParser.TryParse(payload, receivedAt, options, out var checkIn, out _))
            {
                return (0, 1, [DeadLetterReasons.BadCheckIn]);
            }

            if (attributes.TryGetValue("registry", out string? registry) && registry == "down")
            {
                return (0, 1, [DeadLetterReasons.RegistryUnavailable]);
            }

            bool known = !attributes.TryGetValue("known-owners", out string? owners)
                || owners.Split(',').Contains(checkIn.OwnerId.ToString(CultureInfo.InvariantCulture));
            if (!known)
            {
                return (0, 1, [DeadLetterReasons.UnknownOwner]);
            }

            // checked-in=17,18 (owners with an open check-in before the message's time) or none.
            bool open = !attributes.TryGetValue("checked-in", out string? present)
                || present.Split(',').Contains(checkIn.OwnerId.ToString(CultureInfo.InvariantCulture));
            return checkIn.CheckOut && !open ? (0, 1, [DeadLetterReasons.NotCheckedIn]) : (1, 0, []);
        }

        var parser = new ReadingParser(options, TimeProvider.System);
        if (parsed.ReadingKind is not { } kind)
        {
            return parser.TryParseHello(payload, parsed.Hub, out _, out _) ? (1, 0, []) : (0, 1, [DeadLetterReasons.BadHello]);
        }

        var readings = new List<Reading>();
        var deadLetters = new List<DeadLetter>();
        var context = new ReadingParseContext(kind, 1, topic, "docs", receivedAt, contentType);
        var result = parser.Parse(context, payload, readings, deadLetters);
        var reasons = deadLetters.ConvertAll(d => d.Reason);
        if (!attributes.TryGetValue("stored", out string? stored))
        {
            return (result.Accepted, result.Rejected, reasons);
        }

        // stored=hr:72 (a reading of the same key is stored with these values): a reading with another value for one
        // of them is a conflicting-reading dead letter where it is written (tests: ReadingStoreContractTests).
        int conflicting = readings.Count(r => stored.Split(',').Any(pair =>
        {
            string[] parts = pair.Split(':');
            double? value = parts[0] switch
            {
                "hr" => r.HeartRate, "sys" => r.Systolic, "dia" => r.Diastolic, "temp" => r.SkinTemperature,
                "x" => r.X, "y" => r.Y, "z" => r.Z, "kpa" => r.Kpa,
                _ => throw new InvalidOperationException($"stored={stored}: unknown field {parts[0]}"),
            };
            return value is { } v && v != double.Parse(parts[1], CultureInfo.InvariantCulture);
        }));
        reasons.AddRange(Enumerable.Repeat(DeadLetterReasons.ConflictingReading, conflicting));
        return (result.Accepted - conflicting, result.Rejected + conflicting, reasons);
    }

    private static (string Topic, string Payload, string? ContentType) Extract(DocExample example)
    {
        example.Attributes.TryGetValue("topic", out string? topic);
        example.Attributes.TryGetValue("content-type", out string? contentType);
        if (example.Language == "json")
        {
            topic.ShouldNotBeNull($"{example}: a json example needs topic=...");
            return (topic, example.Body, contentType);
        }

        example.Language.ShouldBe("sh", $"{example}: examples are json or sh blocks");
        var words = ShellWords(example.Body, Doc.Value.ReceivedAt);
        words.Count(w => w == "mosquitto_pub").ShouldBe(1, $"{example}: one mosquitto_pub per example");
        string? publishTopic = null;
        string? message = null;
        for (int i = 0; i < words.Count; i++)
        {
            switch (words[i])
            {
                case "-t":
                    publishTopic = words[++i];
                    break;
                case "-m":
                    message = words[++i];
                    break;
                case "-D" when words[i + 1] == "publish" && words[i + 2] == "content-type":
                    contentType = words[i + 3];
                    i += 3;
                    break;
            }
        }

        publishTopic.ShouldNotBeNull($"{example}: mosquitto_pub needs -t");
        message.ShouldNotBeNull($"{example}: mosquitto_pub needs -m '<payload>'");
        if (topic is not null)
        {
            publishTopic.ShouldBe(topic, $"{example}: the marker's topic and -t differ");
        }

        return (publishTopic, message, contentType);
    }

    /// <summary>
    /// The words of a POSIX shell command, enough for our examples: white space, '...' quoting, line continuation,
    /// and the one substitution the doc uses, "$(date +%s%3N)" (epoch milliseconds, here the received time).
    /// </summary>
    private static List<string> ShellWords(string command, DateTime now)
    {
        const string EpochMilliseconds = "\"$(date +%s%3N)\"";
        var words = new List<string>();
        var word = new StringBuilder();
        bool inWord = false;
        for (int i = 0; i < command.Length; i++)
        {
            char c = command[i];
            if (c == '\\' && i + 1 < command.Length && command[i + 1] == '\n')
            {
                i++;
            }
            else if (char.IsWhiteSpace(c))
            {
                if (inWord)
                {
                    words.Add(word.ToString());
                    word.Clear();
                    inWord = false;
                }
            }
            else if (c == '\'')
            {
                int end = command.IndexOf('\'', i + 1);
                end.ShouldBeGreaterThan(i, "an unclosed ' in a shell example");
                word.Append(command, i + 1, end - i - 1);
                i = end;
                inWord = true;
            }
            else if (string.CompareOrdinal(command, i, EpochMilliseconds, 0, EpochMilliseconds.Length) == 0)
            {
                word.Append(((now.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerMillisecond).ToString(CultureInfo.InvariantCulture));
                i += EpochMilliseconds.Length - 1;
                inWord = true;
            }
            else
            {
                (c is '"' or '$' or '`' or '\\' or ';' or '|' or '&').ShouldBeFalse($"shell examples quote with '...' only (found {c})");
                word.Append(c);
                inWord = true;
            }
        }

        if (inWord)
        {
            words.Add(word.ToString());
        }

        return words;
    }

    private static (IReadOnlyList<DocExample>, DateTime, string[]) Load()
    {
        string path = FindProtocolDoc();
        string[] lines = File.ReadAllText(path).Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        var receivedAt = DateTime.MinValue;
        var examples = new List<DocExample>();
        for (int i = 0; i < lines.Length; i++)
        {
            var received = ReceivedAtMarker().Match(lines[i]);
            if (received.Success)
            {
                receivedAt = DateTime.Parse(received.Groups[1].Value, CultureInfo.InvariantCulture,
                    DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal);
                continue;
            }

            var marker = ExampleMarker().Match(lines[i]);
            if (!marker.Success)
            {
                lines[i].ShouldNotContain("<!-- example:", Case.Insensitive, $"line {i + 1}: a malformed example marker");
                continue;
            }

            var attributes = marker.Groups[1].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries)
                .Select(pair => pair.Split('=', 2))
                .ToDictionary(pair => pair[0], pair => pair.Length == 2 ? pair[1] : string.Empty);
            attributes.ShouldContainKey("accepted", $"line {i + 1}");
            attributes.ShouldContainKey("rejected", $"line {i + 1}");

            int fence = i + 1;
            while (fence < lines.Length && lines[fence].Trim().Length == 0)
            {
                fence++;
            }

            (fence < lines.Length && lines[fence].StartsWith("```", StringComparison.Ordinal))
                .ShouldBeTrue($"line {i + 1}: an example marker must be followed by a fenced block");
            int end = Array.FindIndex(lines, fence + 1, l => l.StartsWith("```", StringComparison.Ordinal));
            end.ShouldBeGreaterThan(fence, $"line {fence + 1}: the fenced block never closes");
            examples.Add(new DocExample(fence + 1, attributes, lines[fence][3..].Trim(), string.Join("\n", lines[(fence + 1)..end])));
        }

        receivedAt.ShouldNotBe(DateTime.MinValue, "docs/protocol.md must say <!-- examples-received-at: ... -->");
        return (examples, receivedAt, lines);
    }

    private static string FindProtocolDoc()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            string candidate = Path.Combine(directory.FullName, "docs", "protocol.md");
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        throw new FileNotFoundException($"docs/protocol.md not found above {AppContext.BaseDirectory}");
    }

    [GeneratedRegex(@"^<!-- example: (.*) -->\s*$")]
    private static partial Regex ExampleMarker();

    [GeneratedRegex(@"^<!-- examples-received-at: (\S+) -->\s*$")]
    private static partial Regex ReceivedAtMarker();
}

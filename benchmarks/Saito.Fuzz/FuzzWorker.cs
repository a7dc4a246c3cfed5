using System.Diagnostics;
using Saito.Fuzz.Targets;

namespace Saito.Fuzz;

/// <summary>
/// The fuzzing loop, run by the supervisor in a child process. Starts from the target's seeds and the corpus
/// folder, then until the deadline: mutates a corpus entry (or, one time in twenty, builds a malformed input from
/// scratch), publishes it to the supervisor, runs it. An input whose outcome (<see cref="FuzzTarget.Run"/>'s
/// description) has not been seen before joins the corpus; this is the only guidance there is without coverage
/// instrumentation. An exception that escapes the target is a crash: minimised, then saved.
/// The loop runs on a thread with a thread-pool-sized stack (1.5 MiB), where the broker and the pipeline run it.
/// </summary>
internal sealed class FuzzWorker
{
    private const int MaxCorpus = 4_096;
    private const int StackSize = 1536 * 1024;

    private readonly FuzzTarget _target;
    private readonly SharedInput _shared;
    private readonly CrashStore _crashes;
    private readonly string? _corpusDirectory;
    private readonly Random _random;
    private readonly Mutator _mutator;
    private readonly List<byte[]> _corpus = [];
    private readonly HashSet<string> _outcomes = [];

    public FuzzWorker(FuzzTarget target, SharedInput shared, CrashStore crashes, string? corpusDirectory, int seed)
    {
        _target = target;
        _shared = shared;
        _crashes = crashes;
        _corpusDirectory = corpusDirectory;
        _random = new Random(seed);
        _mutator = new Mutator(_random, target.Tokens);
    }

    public static int Run(FuzzTarget target, string sharedPath, string crashDirectory, string? corpusDirectory, TimeSpan duration, int seed)
    {
        using var shared = SharedInput.Open(sharedPath);
        var worker = new FuzzWorker(target, shared, new CrashStore(crashDirectory), corpusDirectory, seed);
        var thread = new Thread(() => worker.Loop(Stopwatch.StartNew(), duration), StackSize) { Name = "fuzz" };
        thread.Start();
        thread.Join();
        return 0;
    }

    private void Loop(Stopwatch clock, TimeSpan duration)
    {
        foreach (byte[] input in _target.Seeds().Concat(ReadCorpusDirectory()))
        {
            if (Execute(input) is { } outcome && _outcomes.Add(outcome))
            {
                _corpus.Add(input);
            }
        }

        if (_corpus.Count == 0)
        {
            _corpus.Add([]);
        }

        int loaded = _corpus.Count;
        long executions = 0;
        var nextReport = TimeSpan.FromSeconds(10);
        while (clock.Elapsed < duration)
        {
            byte[] input = _random.Next(20) == 0
                ? _target.Malformed(_random)
                : _mutator.Mutate(PickSmallish(), _corpus[_random.Next(_corpus.Count)]);
            executions++;
            if (Execute(input) is { } outcome && _outcomes.Add(outcome) && _corpus.Count < MaxCorpus)
            {
                _corpus.Add(input);
                SaveToCorpusDirectory(input);
            }

            if (clock.Elapsed >= nextReport)
            {
                nextReport += TimeSpan.FromSeconds(10);
                Report(clock.Elapsed, executions, loaded);
            }
        }

        Report(clock.Elapsed, executions, loaded);
    }

    /// <summary>The smaller of two corpus entries: small inputs run fast, so the fuzzer tries more of them.</summary>
    private byte[] PickSmallish()
    {
        byte[] a = _corpus[_random.Next(_corpus.Count)];
        byte[] b = _corpus[_random.Next(_corpus.Count)];
        return a.Length <= b.Length ? a : b;
    }

    private void Report(TimeSpan elapsed, long executions, int loaded) =>
        Console.WriteLine($"[{_target.Name}] {elapsed.TotalSeconds,5:F0} s: {executions:N0} execs ({executions / Math.Max(elapsed.TotalSeconds, 0.001):N0}/s), " +
            $"corpus {_corpus.Count:N0} ({_corpus.Count - loaded:N0} new), outcomes {_outcomes.Count:N0}, crashers saved {_crashes.Saved}");

    /// <summary>Runs one input; null when it crashed (and the crash was handled).</summary>
    private string? Execute(byte[] input)
    {
        _shared.Publish(input);
        try
        {
            return _target.Run(input);
        }
        catch (Exception ex)
        {
            string identity = CrashStore.IdentityOf(ex);
            byte[] smallest = Minimise(input, identity);
            if (_crashes.Save("crash", smallest, identity, ex.ToString()) is { } path)
            {
                Console.WriteLine($"[{_target.Name}] CRASH {identity}: {smallest.Length} bytes (from {input.Length}) in {path}");
            }

            return null;
        }
    }

    /// <summary>Drops chunks (halves, quarters, ... single bytes) while the same crash remains; a bounded number of tries.</summary>
    private byte[] Minimise(byte[] input, string identity)
    {
        byte[] current = input;
        int budget = 2_000;
        for (int chunk = Math.Max(1, current.Length / 2); chunk >= 1 && budget > 0; chunk /= 2)
        {
            for (int at = 0; at < current.Length && budget > 0; budget--)
            {
                byte[] candidate = [.. current.AsSpan(0, at), .. current.AsSpan(Math.Min(current.Length, at + chunk))];
                if (SameCrash(candidate, identity))
                {
                    current = candidate;
                }
                else
                {
                    at += chunk;
                }
            }
        }

        return current;
    }

    private bool SameCrash(byte[] candidate, string identity)
    {
        _shared.Publish(candidate);
        try
        {
            _target.Run(candidate);
            return false;
        }
        catch (Exception ex)
        {
            return CrashStore.IdentityOf(ex) == identity;
        }
    }

    private IEnumerable<byte[]> ReadCorpusDirectory() =>
        _corpusDirectory is null || !Directory.Exists(_corpusDirectory)
            ? []
            : Directory.EnumerateFiles(_corpusDirectory).Where(f => new FileInfo(f).Length <= Mutator.MaxInput).Order(StringComparer.Ordinal).Select(File.ReadAllBytes);

    private void SaveToCorpusDirectory(byte[] input)
    {
        if (_corpusDirectory is null)
        {
            return;
        }

        Directory.CreateDirectory(_corpusDirectory);
        File.WriteAllBytes(Path.Combine(_corpusDirectory, CrashStore.Fingerprint(input)[..16]), input);
    }
}

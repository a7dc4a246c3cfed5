using System.Diagnostics;
using Saito.Fuzz.Targets;

namespace Saito.Fuzz;

/// <summary>The modes besides fuzzing: seeds out, crashers replayed, and the target process afl-fuzz runs.</summary>
internal static class Commands
{
    public static int WriteSeeds(FuzzTarget target, string folder)
    {
        Directory.CreateDirectory(folder);
        var seeds = target.Seeds();
        for (int i = 0; i < seeds.Count; i++)
        {
            File.WriteAllBytes(Path.Combine(folder, $"seed-{i:D2}"), seeds[i]);
        }

        Console.WriteLine($"{seeds.Count} seeds for {target.Name} in {Path.GetFullPath(folder)}");
        return 0;
    }

    /// <summary>Runs each file once on a thread-pool-sized stack; exit code 1 when any of them still crashes.</summary>
    public static int Reproduce(FuzzTarget target, string path)
    {
        string[] files = Directory.Exists(path)
            ? [.. Directory.EnumerateFiles(path).Where(f => !f.EndsWith(".txt", StringComparison.Ordinal)).Order(StringComparer.Ordinal)]
            : [path];
        int failures = 0;
        foreach (string file in files)
        {
            byte[] input = File.ReadAllBytes(file);
            string result = string.Empty;
            var clock = Stopwatch.StartNew();
            var thread = new Thread(() =>
            {
                try
                {
                    result = "ok: " + target.Run(input);
                }
                catch (Exception ex)
                {
                    result = "CRASH: " + ex;
                }
            }, 1536 * 1024);
            thread.Start();
            thread.Join();
            failures += result.StartsWith("CRASH", StringComparison.Ordinal) ? 1 : 0;
            string shown = result.Length > 400 ? result[..400] + "..." : result;
            Console.WriteLine($"{Path.GetFileName(file)} ({input.Length} bytes, {clock.Elapsed.TotalMilliseconds:F0} ms): {shown}");
        }

        return failures == 0 ? 0 : 1;
    }

    /// <summary>
    /// One afl-fuzz target process: SharpFuzz runs each input afl-fuzz hands it and reports the branches taken in
    /// the instrumented Saito assemblies. Out of process, so that a stack overflow is a crash and not the end.
    /// An exception escaping <see cref="FuzzTarget.Run"/> is the crash afl-fuzz records. The target is made inside
    /// the action: instrumented code must not run before SharpFuzz has set up afl-fuzz's shared memory.
    /// </summary>
    public static int RunUnderAfl(string name)
    {
        FuzzTarget? target = null;
        SharpFuzz.Fuzzer.OutOfProcess.Run(stream =>
        {
            target ??= FuzzTarget.Create(name);
            using var buffer = new MemoryStream();
            stream.CopyTo(buffer);
            target.Run(buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
        });
        return 0;
    }
}

using System.CommandLine;
using Saito.Fuzz;
using Saito.Fuzz.Targets;

var target = new Argument<string>("target") { Description = "mqtt-packet, saito-json or senml" };
var seconds = new Option<int>("--seconds") { Description = "How long to fuzz", DefaultValueFactory = _ => 60 };
var corpus = new Option<string?>("--corpus") { Description = "Folder of inputs to start from; inputs with new outcomes are added to it" };
var crashes = new Option<string>("--crashes") { Description = "Folder for crashers (.bin input, .txt report)", DefaultValueFactory = _ => "fuzz-crashes" };
var seed = new Option<int?>("--seed") { Description = "Random seed (default: from the clock)" };
var hangSeconds = new Option<int>("--hang-seconds") { Description = "An input that runs this long is a hang", DefaultValueFactory = _ => 10 };
var repro = new Option<string?>("--repro") { Description = "Run each file given (or each file in the folder given) once and say what happened" };
var writeSeeds = new Option<string?>("--write-seeds") { Description = "Write the target's seed inputs to this folder (afl-fuzz's -i) and stop" };
var afl = new Option<bool>("--afl") { Description = "Be afl-fuzz's target (SharpFuzz, instrumented assemblies): see README.md" };
var workerInput = new Option<string?>("--worker-input") { Description = "Internal: run as the supervisor's worker", Hidden = true };

var root = new RootCommand("Fuzzes Saito's MQTT decoder and payload parsers; see README.md.")
{
    target, seconds, corpus, crashes, seed, hangSeconds, repro, writeSeeds, afl, workerInput,
};
root.SetAction(parse =>
{
    string name = parse.GetValue(target)!;
    if (!FuzzTarget.Names.Contains(name))
    {
        Console.Error.WriteLine($"Unknown target '{name}': {string.Join(", ", FuzzTarget.Names)}");
        return 2;
    }

    if (parse.GetValue(afl))
    {
        return Commands.RunUnderAfl(name);
    }

    var chosen = FuzzTarget.Create(name);

    if (parse.GetValue(writeSeeds) is { } seedFolder)
    {
        return Commands.WriteSeeds(chosen, seedFolder);
    }

    if (parse.GetValue(repro) is { } path)
    {
        return Commands.Reproduce(chosen, path);
    }

    var duration = TimeSpan.FromSeconds(Math.Max(1, parse.GetValue(seconds)));
    int randomSeed = parse.GetValue(seed) ?? Environment.TickCount;
    return parse.GetValue(workerInput) is { } sharedPath
        ? FuzzWorker.Run(chosen, sharedPath, parse.GetValue(crashes)!, parse.GetValue(corpus), duration, randomSeed)
        : FuzzSupervisor.Run(chosen, duration, parse.GetValue(crashes)!, parse.GetValue(corpus), randomSeed, TimeSpan.FromSeconds(parse.GetValue(hangSeconds)));
});
return await root.Parse(args).InvokeAsync();

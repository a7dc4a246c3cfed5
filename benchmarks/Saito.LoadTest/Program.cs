using System.CommandLine;
using Saito.LoadTest.Archive;
using Saito.LoadTest.Broker;
using Saito.LoadTest.Bulk;
using Saito.LoadTest.Classroom;
using Saito.LoadTest.Dashboard;
using Saito.LoadTest.Ingest;
using Saito.LoadTest.Query;
using Saito.LoadTest.Tiers;
using Spectre.Console;

// Tables stay readable when the output goes to a file or a CI log (Spectre assumes 80 columns there).
if (Console.IsOutputRedirected)
{
    AnsiConsole.Profile.Width = 200;
}

var root = new RootCommand("Saito load tests: drive real brokers and databases over loopback and report what they sustain.")
{
    ArchiveCommand.Create(),
    BrokerCommand.Create(),
    BulkCommand.Create(),
    ClassroomCommand.Create(),
    DashboardCommand.Create(),
    IngestCommand.Create(),
    QueryCommand.Create(),
    TiersCommand.Create(),
};
return await root.Parse(args).InvokeAsync();

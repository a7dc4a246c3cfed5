using System.CommandLine;

namespace Saito.LoadTest.Tests;

/// <summary>One in-process run of a load-tool command: its exit code and what it wrote to its error stream.</summary>
internal readonly record struct ToolRun(int Exit, string Error)
{
    public static async Task<ToolRun> InvokeAsync(Command command, params string[] args)
    {
        using var error = new StringWriter();
        int exit = await command.Parse(args).InvokeAsync(new InvocationConfiguration { Error = error }, TestContext.Current.CancellationToken);
        return new ToolRun(exit, error.ToString());
    }

    /// <summary>For an assertion's message: nothing after a clean run, the exit code and the error output otherwise.</summary>
    public string Why => Exit == 0 ? "" : $"; exit {Exit}, the error output:\n{Error}";
}

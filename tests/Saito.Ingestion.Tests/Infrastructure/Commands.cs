using System.Diagnostics;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>Runs a system command (mount, fallocate, kill, runuser) and returns its exit code and output.</summary>
public static class Commands
{
    public static async Task<(int Code, string Output)> RunAsync(string program, params string[] arguments)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardError = true, RedirectStandardOutput = true, WorkingDirectory = "/" };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();
        return (process.ExitCode, await output + await error);
    }
}

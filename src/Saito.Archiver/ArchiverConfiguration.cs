using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Configuration.Memory;
using Saito.Storage;
using Saito.Storage.Archive;

namespace Saito.Archiver;

/// <summary>
/// The server's configuration chain, for a process that is not a web host: <c>appsettings.json</c> (and
/// <c>appsettings.{DOTNET_ENVIRONMENT}.json</c>) beside the executable, then environment variables, then
/// <c>Saito__Section__Key</c> variables, then <c>--Section:Key=value</c> arguments (see Saito.Server's SaitoConfiguration).
/// </summary>
internal static class ArchiverConfiguration
{
    /// <summary>Splits <c>--Section:Key=value</c> / <c>--Section:Key value</c> (configuration) from the command's own arguments.</summary>
    public static (string[] Command, string[] Configuration) Split(string[] args)
    {
        var command = new List<string>();
        var configuration = new List<string>();
        for (int i = 0; i < args.Length; i++)
        {
            string arg = args[i];
            string name = arg.Split('=', 2)[0];
            if (arg.StartsWith("--", StringComparison.Ordinal) && name.Contains(':', StringComparison.Ordinal))
            {
                configuration.Add(arg);
                if (!arg.Contains('=', StringComparison.Ordinal) && i + 1 < args.Length)
                {
                    configuration.Add(args[++i]);
                }
            }
            else
            {
                command.Add(arg);
            }
        }

        return (command.ToArray(), configuration.ToArray());
    }

    public static IConfigurationRoot Build(string[] configurationArgs)
    {
        string environment = Environment.GetEnvironmentVariable("DOTNET_ENVIRONMENT") ?? Environment.GetEnvironmentVariable("ASPNETCORE_ENVIRONMENT") ?? "Production";
        var builder = new ConfigurationBuilder()
            .SetBasePath(AppContext.BaseDirectory)
            .AddJsonFile("appsettings.json", optional: true)
            .AddJsonFile($"appsettings.{environment}.json", optional: true)
            .AddEnvironmentVariables()
            .AddEnvironmentVariables("Saito__")
            .AddCommandLine(configurationArgs);

        // Below every source: the server's default folders (DataPaths), so both find the same databases from anywhere.
        string data = DataPaths.Resolve(builder.Build()[DataPaths.Key]);
        builder.Sources.Insert(0, new MemoryConfigurationSource { InitialData = DataPaths.StorageDefaults(data) });
        return builder.Build();
    }

    /// <summary>The Storage and Archiver sections, bound and validated; the failures when either is invalid.</summary>
    public static (StorageOptions Storage, ArchiverOptions Archiver, IReadOnlyList<string> Failures) Load(IConfiguration configuration)
    {
        var storage = new StorageOptions();
        var archiver = new ArchiverOptions();
        var failures = new List<string>();
        try
        {
            configuration.GetSection(StorageOptions.SectionName).Bind(storage);
            configuration.GetSection(ArchiverOptions.SectionName).Bind(archiver);
        }
        catch (InvalidOperationException e)
        {
            failures.Add(e.InnerException is null ? e.Message : $"{e.Message} {e.InnerException.Message}");
            return (storage, archiver, failures);
        }

        if (new StorageOptionsValidator().Validate(null, storage) is { Failed: true } storageResult)
        {
            failures.AddRange(storageResult.Failures);
        }

        if (new ArchiverOptionsValidator().Validate(null, archiver) is { Failed: true } archiverResult)
        {
            failures.AddRange(archiverResult.Failures);
        }

        return (storage, archiver, failures);
    }
}

using Microsoft.Extensions.Configuration.CommandLine;
using Microsoft.Extensions.Configuration.EnvironmentVariables;
using Microsoft.Extensions.Configuration.Memory;
using Saito.Server.Api;
using Saito.Server.Security;
using Saito.Storage;

namespace Saito.Server;

public static class SaitoConfiguration
{
    /// <summary>
    /// Adds <c>Saito__Section__Key</c> environment variables (for example <c>Saito__Mqtt__Port=1884</c>) to the
    /// configuration, above appsettings.json and below command-line arguments, so the usual .NET order holds:
    /// appsettings.json, then environment, then <c>--Section:Key=value</c>. Below them all, the default paths of Saito's
    /// files, in <see cref="DataPaths"/>' folder: the same whichever folder Saito is started from.
    /// </summary>
    public static IHostApplicationBuilder AddSaitoConfiguration(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var sources = builder.Configuration.Sources;
        int commandLine = sources.ToList().FindIndex(s => s is CommandLineConfigurationSource);
        var saitoEnvironment = new EnvironmentVariablesConfigurationSource { Prefix = "Saito__" };
        if (commandLine < 0)
        {
            sources.Add(saitoEnvironment);
        }
        else
        {
            sources.Insert(commandLine, saitoEnvironment);
        }

        string data = DataPaths.Resolve(builder.Configuration[DataPaths.Key]);
        sources.Insert(0, new MemoryConfigurationSource { InitialData = DefaultPaths(data) });
        return builder;
    }

    /// <summary>The path settings' defaults in <paramref name="dataPath"/>.</summary>
    public static IEnumerable<KeyValuePair<string, string?>> DefaultPaths(string dataPath) =>
    [
        .. DataPaths.StorageDefaults(dataPath),
        new($"{SecurityOptions.SectionName}:{nameof(SecurityOptions.CredentialsFile)}", Path.Combine(dataPath, "credentials.json")),
        new($"{AuthOptions.SectionName}:{nameof(AuthOptions.KeysPath)}", Path.Combine(dataPath, "keys")),
    ];
}

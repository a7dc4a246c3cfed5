using Microsoft.Extensions.Configuration.CommandLine;
using Microsoft.Extensions.Configuration.EnvironmentVariables;

namespace Saito.Server;

public static class SaitoConfiguration
{
    /// <summary>
    /// Adds <c>Saito__Section__Key</c> environment variables (for example <c>Saito__Mqtt__Port=1884</c>) to the
    /// configuration, above appsettings.json and below command-line arguments, so the usual .NET order holds:
    /// appsettings.json, then environment, then <c>--Section:Key=value</c>.
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

        return builder;
    }
}

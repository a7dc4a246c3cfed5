namespace Saito.Server;

/// <summary>
/// <c>Saito.Server --help</c>: what the program does and its commands, printed instead of starting a server (it started
/// one, on the default ports, for a person who only asked what it does).
/// </summary>
public static class ServerUsage
{
    /// <summary>A help flag on a command line that is not one of the commands (they answer <c>--help</c> themselves).</summary>
    public static bool Asked(string[] args)
    {
        ArgumentNullException.ThrowIfNull(args);
        return args is ["help", ..] || args.Any(a => a is "--help" or "-h" or "-?" or "/?" or "/h");
    }

    public const string Text = """
        Saito: sensor readings from classroom hubs over MQTT, stored, shown to staff, archived.

        Usage:
          Saito.Server [--Section:Key=value ...]      start the server (MQTT broker, API, dashboard, /health, /metrics)
          Saito.Server hubs add|list|rotate|disable|enable|remove|site ...
                                                      hubs that publish readings (their secrets; credentials file)
          Saito.Server clients add|list|rotate|disable|enable|remove ...
                                                      other MQTT clients by role (dashboard, integration)
          Saito.Server users add|list|reset-password|disable|enable ...
                                                      staff accounts for the API and pages
          Saito.Server registry migrate|script|seed-example
                                                      the registry's database
          Saito.Server <command> --help               a command's own options
          Saito.Server --help                         this text

        Settings come from appsettings.json, Saito__Section__Key environment variables and --Section:Key=value
        arguments, in that order (for example --urls=http://127.0.0.1:5000 --Mqtt:Port=1883 --Storage:DataPath=/var/lib/saito).
        Every setting, its default and its limits: README.md ("Configuration"); who may do what: docs/security.md.

        """;
}

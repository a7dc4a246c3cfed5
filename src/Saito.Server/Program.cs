using Microsoft.Extensions.Options;
using Saito.Server;
using Saito.Server.Registry;
using Saito.Server.Security;

// Every file and folder Saito or its commands create is its owner's alone (0600 and 0700).
PrivateFiles.Restrict();

if (CredentialsCli.Handles(args))
{
    // saito hubs ... / saito clients ...: the same configuration as the server (appsettings.json, Saito__ variables, --Section:Key=value).
    var settings = WebApplication.CreateBuilder(args.Where(a => a.Contains(':', StringComparison.Ordinal)).ToArray());
    settings.AddSaitoConfiguration();
    return CredentialsCli.Run(args, settings.Configuration, Console.Out, Console.Error);
}

if (RegistryCli.Handles(args))
{
    // saito users ... / saito registry ...: staff accounts and the registry's database, with the server's configuration.
    return await RegistryCli.RunAsync(args, Console.Out, Console.Error);
}

if (ServerUsage.Asked(args))
{
    Console.Out.Write(ServerUsage.Text);
    return 0;
}

try
{
    await SaitoApp.Build(args).RunAsync();
    return 0;
}
catch (OptionsValidationException ex)
{
    // A bad setting: say which, without a stack trace, and exit non-zero so systemd and scripts notice.
    Console.Error.WriteLine("Saito cannot start: its configuration is invalid.");
    foreach (var failure in ex.Failures)
    {
        Console.Error.WriteLine("  - " + failure);
    }

    Console.Error.WriteLine("Settings come from appsettings.json, Saito__Section__Key environment variables and --Section:Key=value arguments (see README).");
    return 2;
}
catch (IOException ex) when (ex.InnerException is Microsoft.AspNetCore.Connections.AddressInUseException)
{
    // Another program (a Mosquitto, a second Saito) holds a port Saito was told to listen on.
    Console.Error.WriteLine($"Saito cannot start: {ex.Message}");
    Console.Error.WriteLine("Another program is listening there (a Mosquitto or another Saito?). Stop it, or choose other ports: " +
        "--Mqtt:Port=N (MQTT), --Mqtt:TlsPort=N (MQTT over TLS), --urls=http://127.0.0.1:N (HTTP, WebSocket and /health).");
    return 3;
}

using Microsoft.Extensions.Options;
using Saito.Server;

try
{
    SaitoApp.Build(args).Run();
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

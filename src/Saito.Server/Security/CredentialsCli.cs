using System.CommandLine;
using System.Globalization;
using System.Text.Json;

namespace Saito.Server.Security;

/// <summary>
/// <c>saito hubs ...</c> and <c>saito clients ...</c>: who may connect to the broker. Changes the credentials file
/// (<c>Security:CredentialsFile</c>, or <c>--file</c>); a running server picks the change up at the next CONNECT.
/// <code>
/// saito hubs add hub-1 [--site north]           # prints hub-1's secret, once
/// saito hubs site hub-1 north | site hub-1 --none # its devices send only through hubs of its site
/// saito hubs list | rotate hub-1 | disable hub-1 | enable hub-1 | remove hub-1
/// saito clients add dashboard --role dashboard  # a client that may read every hub's readings
/// </code>
/// </summary>
public static class CredentialsCli
{
    private static readonly JsonSerializerOptions s_json = new() { PropertyNamingPolicy = JsonNamingPolicy.CamelCase, WriteIndented = true };

    public static bool Handles(string[] args) => args.Length > 0 && args[0] is "hubs" or "clients";

    /// <param name="args">The command line, first word <c>hubs</c> or <c>clients</c>.</param>
    /// <param name="configuration">The server's configuration (for <c>Security:CredentialsFile</c> and <c>Security:HashIterations</c>).</param>
    /// <param name="output">Where results and new secrets go (stdout).</param>
    /// <param name="error">Where errors go (stderr).</param>
    public static int Run(string[] args, IConfiguration configuration, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(configuration);
        var settings = new SecurityOptions();
        configuration.GetSection(SecurityOptions.SectionName).Bind(settings);
        // The server validates these at start; the command line hashes new secrets with them, so it checks them too.
        var invalid = new List<System.ComponentModel.DataAnnotations.ValidationResult>();
        if (!System.ComponentModel.DataAnnotations.Validator.TryValidateObject(settings, new(settings), invalid, validateAllProperties: true))
        {
            foreach (var result in invalid)
            {
                error.WriteLine($"Security:{string.Join(", ", result.MemberNames)}: {result.ErrorMessage}");
            }

            return 2;
        }

        var file = new Option<string?>("--file") { Description = "The credentials file (default Security:CredentialsFile, " + settings.CredentialsFile + ")", Recursive = true };
        var root = new RootCommand("Who may connect to Saito's broker: hubs (publish their own readings) and other clients (by role).")
        {
            Group("hubs", "Sensor hubs: each publishes only under saito/{its name}/.", hubs: true, settings, file, output),
            Group("clients", "Other clients (the dashboard, integrations): what they may do comes from their roles (Security:SubscribeRoles).", hubs: false, settings, file, output),
        };
        root.Options.Add(file);
        var parse = root.Parse(args.Where(a => !(a.StartsWith("--", StringComparison.Ordinal) && a.Split('=')[0].Contains(':', StringComparison.Ordinal))).ToArray());
        if (parse.Errors.Count > 0)
        {
            foreach (var e in parse.Errors)
            {
                error.WriteLine(e.Message);
            }

            error.WriteLine("See saito hubs --help.");
            return 2;
        }

        try
        {
            return parse.Invoke(new InvocationConfiguration { EnableDefaultExceptionHandler = false, Output = output, Error = error });
        }
        catch (CredentialsException e)
        {
            error.WriteLine(e.Message);
            return 1;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or JsonException)
        {
            error.WriteLine($"The credentials file cannot be read or written: {e.Message}");
            return 1;
        }
    }

    private static Command Group(string name, string description, bool hubs, SecurityOptions settings, Option<string?> file, TextWriter output)
    {
        CredentialStore Store(ParseResult parse) => new(parse.GetValue(file) ?? settings.CredentialsFile);
        string noun = hubs ? "hub" : "client";
        var nameArgument = () => new Argument<string>("name") { Description = $"The {noun}'s name: its MQTT user name" + (hubs ? " and its topic level (saito/{name}/...)" : string.Empty) };

        var addName = nameArgument();
        var roles = new Option<string[]>("--role") { Description = "A role (repeat for several), e.g. dashboard or integration", Required = !hubs, AllowMultipleArgumentsPerToken = true };
        var addSite = new Option<string?>("--site") { Description = "The hub's site: devices it registers send only through hubs of this site (default: none, they roam to every hub)" };
        var add = new Command("add", $"Add a {noun} and print its new secret (shown once; only its hash is kept).") { addName };
        if (!hubs)
        {
            add.Options.Add(roles);
        }
        else
        {
            add.Options.Add(addSite);
        }

        add.SetAction(parse =>
        {
            string who = parse.GetValue(addName)!;
            if (!CredentialStore.IsValidName(who))
            {
                throw new CredentialsException($"'{who}' is not a valid name: use letters, digits, '.', '_' and '-' (1 to 64 characters).");
            }

            List<string> given = hubs ? [CredentialStore.HubRole] : [.. parse.GetValue(roles) ?? []];
            string? site = hubs ? ValidSite(parse.GetValue(addSite)) : null;
            string secret = SecretHash.NewSecret();
            var store = Store(parse);
            store.Update(clients =>
            {
                if (clients.Any(c => c.Name == who))
                {
                    throw new CredentialsException($"{who} exists already in {store.Path}; use rotate for a new secret.");
                }

                clients.Add(new Credential
                {
                    Name = who,
                    Roles = given,
                    Site = site,
                    SecretHash = SecretHash.Hash(secret, settings.HashIterations),
                    Created = DateTimeOffset.UtcNow,
                });
                return 0;
            });
            PrintSecret(output, who, secret, hubs, store.Path, "added");
            return 0;
        });

        var list = new Command("list", $"List the {noun}s: name, roles, state, when added and rotated.");
        var json = new Option<bool>("--json") { Description = "JSON on stdout" };
        list.Options.Add(json);
        list.SetAction(parse =>
        {
            var store = Store(parse);
            var shown = store.Load().Where(c => !hubs || c.IsHub).OrderBy(c => c.Name, StringComparer.Ordinal).ToList();
            if (parse.GetValue(json))
            {
                output.WriteLine(JsonSerializer.Serialize(shown.Select(c => new { c.Name, c.Roles, c.Site, state = c.Disabled ? "disabled" : "enabled", c.Created, c.Rotated }),
                    s_json));
                return 0;
            }

            if (shown.Count == 0)
            {
                output.WriteLine($"No {noun}s in {store.Path}. Add one: saito {name} add {(hubs ? "hub-1" : "dashboard --role dashboard")}");
                return 0;
            }

            output.WriteLine($"{"NAME",-24} {"ROLES",-24} {"SITE",-16} {"STATE",-9} {"ADDED",-20} ROTATED");
            foreach (var c in shown)
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{c.Name,-24} {string.Join(',', c.Roles),-24} {c.Site ?? "-",-16} {(c.Disabled ? "disabled" : "enabled"),-9} {c.Created:yyyy-MM-dd HH:mm}Z{"",3} {(c.Rotated is { } r ? r.ToString("yyyy-MM-dd HH:mm'Z'", CultureInfo.InvariantCulture) : "-")}"));
            }

            return 0;
        });

        var rotateName = nameArgument();
        var rotate = new Command("rotate", $"Give a {noun} a new secret (printed once); the old one stops working at its next CONNECT.") { rotateName };
        rotate.SetAction(parse =>
        {
            string who = parse.GetValue(rotateName)!;
            string secret = SecretHash.NewSecret();
            var store = Store(parse);
            Change(store, who, hubs, c =>
            {
                c.SecretHash = SecretHash.Hash(secret, settings.HashIterations);
                c.Rotated = DateTimeOffset.UtcNow;
            });
            PrintSecret(output, who, secret, hubs, store.Path, "rotated");
            return 0;
        });

        var disableName = nameArgument();
        var disable = new Command("disable", $"Refuse the {noun} from its next CONNECT on (kept in the file; enable undoes it).") { disableName };
        disable.SetAction(parse => SetDisabled(parse, Store(parse), parse.GetValue(disableName)!, hubs, true, output));
        var enableName = nameArgument();
        var enable = new Command("enable", $"Accept a disabled {noun} again.") { enableName };
        enable.SetAction(parse => SetDisabled(parse, Store(parse), parse.GetValue(enableName)!, hubs, false, output));

        var removeName = nameArgument();
        var force = new Option<bool>("--force") { Description = "Remove a hub of a site even though the devices bound to it then belong to no site" };
        var remove = new Command("remove", $"Delete the {noun} from the file.") { removeName, force };

        remove.SetAction(parse =>
        {
            string who = parse.GetValue(removeName)!;
            bool forced = parse.GetValue(force);
            var store = Store(parse);
            store.Update(clients =>
            {
                if (!forced && CredentialStore.RefuseRemoval(clients, who, $"saito hubs disable {who}", "pass --force") is { } refusal)
                {
                    throw new CredentialsException(refusal);
                }

                int removed = clients.RemoveAll(c => c.Name == who && (!hubs || c.IsHub));
                return removed == 0 ? throw NotFound(who, hubs, store) : removed;
            });
            output.WriteLine($"Removed {who} from {store.Path}.");
            return 0;
        });

        var group = new Command(name, description) { add, list, rotate, disable, enable, remove };
        if (hubs)
        {
            var siteName = nameArgument();
            var siteValue = new Argument<string?>("site") { Description = "The site (letters, digits, '.', '_' and '-')", Arity = ArgumentArity.ZeroOrOne };
            var none = new Option<bool>("--none") { Description = "No site: the devices bound to this hub roam to every hub" };
            var setSite = new Command("site", "Set a hub's site: the devices bound to it then send only through hubs of that site (a hub of another site, or of none, is refused: dead letter device-of-another-site).")
            {
                siteName, siteValue, none,
            };
            setSite.SetAction(parse =>
            {
                string who = parse.GetValue(siteName)!;
                string? given = parse.GetValue(siteValue);
                bool clear = parse.GetValue(none);
                if (clear == (given is not null))
                {
                    throw new CredentialsException("Give a site (saito hubs site hub-1 north) or --none, not both or neither.");
                }

                string? site = clear ? null : ValidSite(given);
                var store = Store(parse);
                Change(store, who, hubs: true, c => c.Site = site);
                output.WriteLine(site is null
                    ? $"{who} has no site: the devices bound to it may send through every hub ({store.Path})."
                    : $"{who} is of site {site}: the devices bound to it may send only through hubs of site {site} ({store.Path}).");
                return 0;
            });
            group.Subcommands.Add(setSite);
        }

        return group;
    }

    private static string? ValidSite(string? site) =>
        site is null || CredentialStore.IsValidName(site)
            ? site
            : throw new CredentialsException($"'{site}' is not a valid site: use letters, digits, '.', '_' and '-' (1 to 64 characters).");

    private static int SetDisabled(ParseResult parse, CredentialStore store, string who, bool hubs, bool disabled, TextWriter output)
    {
        _ = parse;
        Change(store, who, hubs, c => c.Disabled = disabled);
        output.WriteLine($"{who} is {(disabled ? "disabled: its next CONNECT is refused" : "enabled")} ({store.Path}).");
        return 0;
    }

    private static void Change(CredentialStore store, string who, bool hubs, Action<Credential> change) =>
        store.Update(clients =>
        {
            var client = clients.FirstOrDefault(c => c.Name == who && (!hubs || c.IsHub)) ?? throw NotFound(who, hubs, store);
            change(client);
            return 0;
        });

    private static CredentialsException NotFound(string who, bool hubs, CredentialStore store) =>
        new($"No {(hubs ? "hub" : "client")} named {who} in {store.Path}; see saito {(hubs ? "hubs" : "clients")} list.");

    private static void PrintSecret(TextWriter output, string who, string secret, bool hub, string path, string what)
    {
        output.WriteLine($"{who} {what} in {path}.");
        output.WriteLine($"Secret (shown once, only its hash is kept): {secret}");
        output.WriteLine(hub
            ? $"The hub connects with user name {who} and this secret, e.g.: mosquitto_pub -h <saito> -p 1883 -u {who} -P '{secret}' -q 1 -t saito/{who}/wrist-17/biosensor -m '{{\"hr\":72}}'"
            : $"The client connects with user name {who} and this secret, e.g.: mosquitto_sub -h <saito> -p 1883 -u {who} -P '{secret}' -q 1 -t 'saito/#' -v");
    }
}

/// <summary>A credentials command that cannot be done as asked (name taken, not found, bad name): one line for the user.</summary>
public sealed class CredentialsException(string message) : Exception(message);

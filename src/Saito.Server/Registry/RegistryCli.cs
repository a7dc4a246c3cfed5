using System.CommandLine;
using Microsoft.AspNetCore.Identity;
using Microsoft.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore.Infrastructure;
using Microsoft.EntityFrameworkCore.Migrations;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Registry.Timetable;
using Saito.Server.Api;
using Saito.Server.Security;
using Saito.Storage;

namespace Saito.Server.Registry;

/// <summary>
/// <c>saito users ...</c> (staff accounts) and <c>saito registry ...</c> (the registry's database, for DBAs). Uses the
/// server's configuration, creates the storage schema and applies the registry's migrations first when needed.
/// <code>
/// saito users add alice --role admin             # prints alice's generated password, once
/// saito users list | reset-password alice | disable alice | enable alice
/// saito registry migrate                         # apply pending migrations now (Saito also does at start)
/// saito registry script                          # the SQL the migrations run, for a DBA to review or apply
/// saito registry seed-example                    # the example school (3 classes x 16 students), idempotent
/// </code>
/// </summary>
public static class RegistryCli
{
    public static bool Handles(string[] args) => args.Length > 0 && args[0] is "users" or "registry";

    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(args);
        string[] settings = [.. args.Where(a => a.StartsWith("--", StringComparison.Ordinal) && a.Split('=')[0].Contains(':', StringComparison.Ordinal))];
        string[] words = [.. args.Except(settings)];
        int exit = 0;

        var userName = () => new Argument<string>("name") { Description = "The account's user name" };
        var addName = userName();
        var roles = new Option<string[]>("--role") { Description = "A role: admin, teacher, aide or ops (repeat for several)", Required = true, AllowMultipleArgumentsPerToken = true };
        var displayName = new Option<string?>("--display-name") { Description = "The name shown in pages" };
        var add = new Command("add", "Add a staff account and print its generated password (shown once).") { addName, roles, displayName };
        add.SetAction(async (parse, ct) => exit = await WithUsersAsync(settings, async users =>
        {
            string name = parse.GetValue(addName)!;
            string[] given = parse.GetValue(roles) ?? [];
            if (given.FirstOrDefault(r => !StaffRoles.All.Contains(r)) is { } unknown)
            {
                await error.WriteLineAsync($"'{unknown}' is not a role; roles are {string.Join(", ", StaffRoles.All)}.");
                return 2;
            }

            string password = SecretHash.NewSecret();
            var user = new StaffUser { UserName = name, DisplayName = parse.GetValue(displayName), CreatedAt = DateTimeOffset.UtcNow };
            var created = await users.CreateAsync(user, password);
            if (created.Succeeded)
            {
                created = await users.AddToRolesAsync(user, given.Distinct());
            }

            if (!created.Succeeded)
            {
                await error.WriteLineAsync($"Cannot add {name}: {string.Join(" ", created.Errors.Select(e => e.Description))}");
                return 1;
            }

            await output.WriteLineAsync($"Added {name} ({string.Join(", ", given)}). Password, shown once (only its hash is kept):");
            await output.WriteLineAsync();
            await output.WriteLineAsync("    " + password);
            await output.WriteLineAsync();
            await output.WriteLineAsync("Sign in: POST /api/auth/login {\"userName\":\"" + name + "\",\"password\":\"...\"}; the API reference is at /scalar.");
            return 0;
        }, ct));

        var list = new Command("list", "List the staff accounts and their roles.");
        list.SetAction(async (parse, ct) => exit = await WithUsersAsync(settings, async users =>
        {
            var all = await users.Users.OrderBy(u => u.UserName).ToListAsync(ct);
            if (all.Count == 0)
            {
                await output.WriteLineAsync("No staff accounts yet. Add one: saito users add alice --role admin");
                return 0;
            }

            await output.WriteLineAsync($"{"NAME",-24} {"ROLES",-24} STATE");
            foreach (var user in all)
            {
                var view = await UserEndpoints.ViewAsync(users, user);
                await output.WriteLineAsync($"{user.UserName,-24} {string.Join(',', view.Roles),-24} {(view.Disabled ? "disabled" : view.LockedUntil is { } until ? $"locked until {until:u}" : "enabled")}");
            }

            return 0;
        }, ct));

        var resetName = userName();
        var reset = new Command("reset-password", "Give an account a new generated password (printed once) and unlock it.") { resetName };
        reset.SetAction(async (parse, ct) => exit = await WithUserAsync(settings, parse.GetValue(resetName)!, error, async (users, user) =>
        {
            string password = SecretHash.NewSecret();
            var result = await users.ResetPasswordAsync(user, await users.GeneratePasswordResetTokenAsync(user), password);
            if (!result.Succeeded)
            {
                await error.WriteLineAsync(string.Join(" ", result.Errors.Select(e => e.Description)));
                return 1;
            }

            await users.ResetAccessFailedCountAsync(user);
            await users.SetLockoutEndDateAsync(user, null);
            await output.WriteLineAsync($"New password for {user.UserName}, shown once:");
            await output.WriteLineAsync();
            await output.WriteLineAsync("    " + password);
            return 0;
        }, ct));

        var disableName = userName();
        var disable = new Command("disable", "Refuse the account's sign-ins.") { disableName };
        disable.SetAction(async (parse, ct) => exit = await WithUserAsync(settings, parse.GetValue(disableName)!, error, async (users, user) =>
        {
            await users.SetLockoutEndDateAsync(user, DateTimeOffset.MaxValue);
            await users.UpdateSecurityStampAsync(user);
            await output.WriteLineAsync($"{user.UserName} is disabled.");
            return 0;
        }, ct));

        var enableName = userName();
        var enable = new Command("enable", "Accept the account again.") { enableName };
        enable.SetAction(async (parse, ct) => exit = await WithUserAsync(settings, parse.GetValue(enableName)!, error, async (users, user) =>
        {
            await users.SetLockoutEndDateAsync(user, null);
            await output.WriteLineAsync($"{user.UserName} is enabled.");
            return 0;
        }, ct));

        var migrate = new Command("migrate", "Create the storage schema if missing and apply the registry's pending migrations.");
        migrate.SetAction(async (parse, ct) =>
        {
            await using var app = SaitoApp.Build(settings);
            var applied = await PrepareAsync(app.Services, ct);
            await output.WriteLineAsync(applied.Count == 0 ? "The registry is up to date." : $"Applied: {string.Join(", ", applied)}");
            exit = 0;
        });

        var script = new Command("script", "Print the SQL of the registry's migrations for Storage:Provider (idempotent where the engine allows).");
        script.SetAction(async (parse, ct) =>
        {
            await using var app = SaitoApp.Build(settings);
            await using var db = app.Services.GetRequiredService<RegistryContextFactory>().Create();
            await output.WriteAsync(RegistryScripts.Generate(db));
            exit = 0;
        });

        var seed = new Command("seed-example", "Add the example school: three two-hour classes a day, 16 students each, their contacts (example.org), an aide and a teacher; and plan the next two weeks' sessions. Running it again adds nothing.");
        seed.SetAction(async (parse, ct) =>
        {
            await using var app = SaitoApp.Build(settings);
            await PrepareAsync(app.Services, ct);
            await using var db = app.Services.GetRequiredService<RegistryContextFactory>().Create();
            var counts = await ExampleSchool.SeedAsync(db, TimeProvider.System, ct);
            var school = app.Services.GetRequiredService<Microsoft.Extensions.Options.IOptions<SchoolOptions>>().Value;
            var today = school.SchoolDate(DateTimeOffset.UtcNow);
            var plan = await app.Services.GetRequiredService<SessionPlanner>().PlanAsync(db, today, today.AddDays(13), ct);
            await output.WriteLineAsync($"Added {counts.Classes} classes, {counts.Students} students, {counts.Staff} staff, {counts.Contacts} contacts, {counts.RosterEntries} roster places; planned {plan.Added.Count} sessions ({school.TimeZone}).");
            exit = 0;
        });

        var root = new RootCommand("Staff accounts and the registry's database.")
        {
            new Command("users", "Staff accounts (ASP.NET Core Identity) that sign in to the API and pages.") { add, list, reset, disable, enable },
            new Command("registry", "The registry's database: owners, devices, check-ins, notices, accounts.") { migrate, script, seed },
        };
        var parsed = root.Parse(words);
        if (parsed.Errors.Count > 0)
        {
            foreach (var e in parsed.Errors)
            {
                await error.WriteLineAsync(e.Message);
            }

            await error.WriteLineAsync($"See saito {words.FirstOrDefault()} --help.");
            return 2;
        }

        int code = await parsed.InvokeAsync(new InvocationConfiguration { EnableDefaultExceptionHandler = false, Output = output, Error = error });
        return code != 0 ? code : exit;
    }

    /// <summary>The storage schema, then the registry's migrations: what Saito does at start.</summary>
    private static async Task<IReadOnlyList<string>> PrepareAsync(IServiceProvider services, CancellationToken cancellationToken)
    {
        await services.GetRequiredService<IStorageSchema>().EnsureSchemaAsync(cancellationToken);
        return await RegistryMigrator.MigrateAsync(services.GetRequiredService<RegistryContextFactory>(), cancellationToken);
    }

    private static async Task<int> WithUsersAsync(string[] settings, Func<UserManager<StaffUser>, Task<int>> action, CancellationToken cancellationToken)
    {
        await using var app = SaitoApp.Build(settings);
        await PrepareAsync(app.Services, cancellationToken);
        await using var scope = app.Services.CreateAsyncScope();
        return await action(scope.ServiceProvider.GetRequiredService<UserManager<StaffUser>>());
    }

    private static Task<int> WithUserAsync(string[] settings, string name, TextWriter error, Func<UserManager<StaffUser>, StaffUser, Task<int>> action, CancellationToken cancellationToken) =>
        WithUsersAsync(settings, async users =>
        {
            if (await users.FindByNameAsync(name) is not { } user)
            {
                await error.WriteLineAsync($"No account named {name}; see saito users list.");
                return 1;
            }

            return await action(users, user);
        }, cancellationToken);
}

/// <summary>The SQL the registry's migrations run, as a DBA applies it (also written to sql/ and checked by a test).</summary>
public static class RegistryScripts
{
    public static string Generate(DbContext db)
    {
        ArgumentNullException.ThrowIfNull(db);
        var migrator = db.GetService<IMigrator>();
        // SQLite cannot run idempotent scripts (no IF blocks); its script is applied to a database without the registry.
        var options = db.Database.IsSqlite() ? MigrationsSqlGenerationOptions.Default : MigrationsSqlGenerationOptions.Idempotent;
        return migrator.GenerateScript(fromMigration: null, toMigration: null, options).ReplaceLineEndings("\n");
    }
}

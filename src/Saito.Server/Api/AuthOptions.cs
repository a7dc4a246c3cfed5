using Microsoft.Extensions.Options;

namespace Saito.Server.Api;

/// <summary>The <c>Auth</c> section: staff sign-in to the API and pages.</summary>
public sealed class AuthOptions
{
    public const string SectionName = "Auth";

    /// <summary>Wrong passwords in a row before an account is locked for <see cref="LockoutMinutes"/>.</summary>
    public int MaxFailedSignIns { get; set; } = 5;

    public int LockoutMinutes { get; set; } = 15;

    /// <summary>Shortest password accepted when an admin sets one (generated ones are longer).</summary>
    public int MinPasswordLength { get; set; } = 12;

    /// <summary>Life of a bearer token from <c>POST /api/auth/login</c>; refresh it with <c>POST /api/auth/refresh</c>.</summary>
    public int BearerTokenMinutes { get; set; } = 60;

    public int RefreshTokenDays { get; set; } = 14;

    /// <summary>Life of the browser's sign-in cookie (sliding).</summary>
    public int CookieHours { get; set; } = 12;

    /// <summary>Folder of the keys that protect cookies and tokens; several Saito instances behind one name share it. Default: <c>keys</c> in Storage:DataPath.</summary>
    public string KeysPath { get; set; } = "data/keys";
}

internal sealed class AuthOptionsValidator : IValidateOptions<AuthOptions>
{
    public ValidateOptionsResult Validate(string? name, AuthOptions options)
    {
        var failures = new List<string>();
        if (options.MaxFailedSignIns is < 1 or > 100)
        {
            failures.Add("Auth:MaxFailedSignIns must be from 1 to 100.");
        }

        if (options.LockoutMinutes is < 1 or > 24 * 60)
        {
            failures.Add("Auth:LockoutMinutes must be from 1 to 1440.");
        }

        // The passwords Saito makes (new users, resets) must pass the rule too.
        if (options.MinPasswordLength is < 8 or > Security.SecretHash.SecretLength)
        {
            failures.Add($"Auth:MinPasswordLength must be from 8 to {Security.SecretHash.SecretLength} (the passwords Saito generates for new users and resets are {Security.SecretHash.SecretLength} characters).");
        }

        if (options.BearerTokenMinutes is < 1 or > 24 * 60)
        {
            failures.Add("Auth:BearerTokenMinutes must be from 1 to 1440.");
        }

        if (options.RefreshTokenDays is < 1 or > 90)
        {
            failures.Add("Auth:RefreshTokenDays must be from 1 to 90.");
        }

        if (options.CookieHours is < 1 or > 24 * 14)
        {
            failures.Add("Auth:CookieHours must be from 1 to 336.");
        }

        if (string.IsNullOrWhiteSpace(options.KeysPath))
        {
            failures.Add("Auth:KeysPath must name a folder for the sign-in keys.");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

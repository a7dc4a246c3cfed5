using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Microsoft.AspNetCore.Authentication.BearerToken;
using Microsoft.AspNetCore.Identity;
using Microsoft.Extensions.Options;
using Saito.Registry.Model;

namespace Saito.Server.Api;

public sealed record LoginRequest([property: Required, StringLength(256)] string UserName, [property: Required, StringLength(256)] string Password);

public sealed record RefreshRequest([property: Required] string RefreshToken);

public sealed record ChangePasswordRequest([property: Required] string CurrentPassword, [property: Required, StringLength(256)] string NewPassword);

public sealed record Me(int Id, string UserName, string? DisplayName, IReadOnlyList<string> Roles);

/// <summary>
/// Sign-in: <c>POST /api/auth/login</c> answers a bearer token (and a refresh token) for automation, or with
/// <c>?useCookies=true</c> sets the browser's cookie. Identity's own endpoint set is not mapped: it would let anyone
/// register an account. Accounts are made by an admin (<c>saito users add</c> or <c>POST /api/users</c>).
/// </summary>
internal static class AuthEndpoints
{
    public static void MapAuthEndpoints(this RouteGroupBuilder api)
    {
        var auth = api.MapGroup("/auth").WithTags("Sign-in");
        auth.MapPost("/login", LoginAsync).AllowAnonymous()
            .WithSummary("Sign in: a bearer token, or the browser's cookie with ?useCookies=true");
        auth.MapPost("/refresh", RefreshAsync).AllowAnonymous().WithSummary("A new bearer token for a refresh token");
        auth.MapPost("/logout", LogoutAsync).RequireAuthorization()
            .WithSummary("Sign out: every cookie, bearer token and refresh token of the account stops working");
        auth.MapGet("/me", MeAsync).RequireAuthorization().WithSummary("Who is signed in, and their roles");
        auth.MapPost("/password", ChangePasswordAsync).RequireAuthorization().WithSummary("Change your own password");
    }

    private static async Task<IResult> LoginAsync(LoginRequest login, bool? useCookies, SignInManager<StaffUser> signIn)
    {
        signIn.AuthenticationScheme = useCookies == true ? IdentityConstants.ApplicationScheme : IdentityConstants.BearerScheme;
        if (!await StaffSignIn.PasswordAsync(signIn, login.UserName, login.Password, persistent: useCookies == true))
        {
            return Problems.Of(StatusCodes.Status401Unauthorized, "Sign-in failed", StaffSignIn.Refusal);
        }

        // The sign-in wrote the response: the token JSON, or the cookie.
        return TypedResults.Empty;
    }

    private static async Task<IResult> RefreshAsync(RefreshRequest refresh, IOptionsMonitor<BearerTokenOptions> bearer, SignInManager<StaffUser> signIn, TimeProvider time)
    {
        var protector = bearer.Get(IdentityConstants.BearerScheme).RefreshTokenProtector;
        var ticket = protector.Unprotect(refresh.RefreshToken);
        if (ticket?.Properties.ExpiresUtc is not { } expires || time.GetUtcNow() >= expires
            || await signIn.ValidateSecurityStampAsync(ticket.Principal) is not { } user || await signIn.UserManager.IsLockedOutAsync(user))
        {
            return Problems.Of(StatusCodes.Status401Unauthorized, "Refresh refused", "The refresh token is invalid, expired, or its account was changed or locked: sign in again.");
        }

        var principal = await signIn.CreateUserPrincipalAsync(user);
        return TypedResults.SignIn(principal, authenticationScheme: IdentityConstants.BearerScheme);
    }

    private static async Task<IResult> LogoutAsync(SignInManager<StaffUser> signIn, ClaimsPrincipal principal)
    {
        await StaffSignIn.SignOutAsync(signIn, principal);
        return TypedResults.NoContent();
    }

    private static async Task<IResult> MeAsync(ClaimsPrincipal principal, UserManager<StaffUser> users)
    {
        if (await users.GetUserAsync(principal) is not { } user)
        {
            return TypedResults.Unauthorized();
        }

        return TypedResults.Ok(new Me(user.Id, user.UserName!, user.DisplayName, [.. await users.GetRolesAsync(user)]));
    }

    private static async Task<IResult> ChangePasswordAsync(ChangePasswordRequest change, ClaimsPrincipal principal, UserManager<StaffUser> users)
    {
        if (await users.GetUserAsync(principal) is not { } user)
        {
            return TypedResults.Unauthorized();
        }

        var result = await users.ChangePasswordAsync(user, change.CurrentPassword, change.NewPassword);
        return result.Succeeded ? TypedResults.NoContent() : IdentityProblems.From(result);
    }
}

/// <summary>
/// Password sign-in and sign-out, the same for the API and the pages.
/// <list type="bullet">
/// <item>An unknown name, a locked or disabled account and a wrong password get one answer, and each costs one password
/// hash (an unknown or locked account's password is checked against a hash of nothing), so neither the answer (423 was
/// "locked", so the account existed) nor the time (about 50 ms against 3) tells which names are accounts.</item>
/// <item>Signing out changes the account's security stamp, which every request checks (the cookie in
/// <see cref="StaffGrant.ValidateCookieAsync"/>, a bearer token in <see cref="ApiHosting"/>, a refresh token when it is
/// used): every cookie and token issued before stops working, on every device, a copied one included. Dropping the
/// browser's cookie alone left the bearer token, the refresh token and any copy of the cookie valid.</item>
/// </list>
/// </summary>
internal static class StaffSignIn
{
    public const string Refusal = "The user name or the password is wrong, or the account is locked (Auth:MaxFailedSignIns wrong " +
        "passwords in a row lock it for Auth:LockoutMinutes) or disabled by an admin.";

    private static string? s_nobodysHash;

    /// <summary>Signs in with the scheme set on <paramref name="signIn"/>; false for every kind of refusal alike.</summary>
    public static async Task<bool> PasswordAsync(SignInManager<StaffUser> signIn, string userName, string password, bool persistent)
    {
        ArgumentNullException.ThrowIfNull(signIn);
        var users = signIn.UserManager;
        var user = await users.FindByNameAsync(userName);
        if (user is null || await users.IsLockedOutAsync(user))
        {
            // Identity answers these without hashing; hash anyway, so that they take as long as a wrong password.
            var nobody = new StaffUser();
            s_nobodysHash ??= users.PasswordHasher.HashPassword(nobody, Convert.ToBase64String(System.Security.Cryptography.RandomNumberGenerator.GetBytes(32)));
            users.PasswordHasher.VerifyHashedPassword(nobody, s_nobodysHash, password);
            return false;
        }

        var result = await signIn.PasswordSignInAsync(user, password, persistent, lockoutOnFailure: true);
        return result.Succeeded;
    }

    /// <summary>Ends every session of the signed-in account (see the class) and drops this browser's cookie.</summary>
    public static async Task SignOutAsync(SignInManager<StaffUser> signIn, ClaimsPrincipal principal)
    {
        ArgumentNullException.ThrowIfNull(signIn);
        if (await signIn.UserManager.GetUserAsync(principal) is { } user)
        {
            await signIn.UserManager.UpdateSecurityStampAsync(user);
        }

        await signIn.SignOutAsync();
    }
}

/// <summary>Identity's errors as a validation problem.</summary>
internal static class IdentityProblems
{
    public static IResult From(IdentityResult result) =>
        TypedResults.ValidationProblem(result.Errors.GroupBy(e => e.Code).ToDictionary(g => g.Key, g => g.Select(e => e.Description).ToArray()));
}

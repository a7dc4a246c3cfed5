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
        auth.MapPost("/logout", LogoutAsync).RequireAuthorization().WithSummary("Sign the browser out (drops the cookie)");
        auth.MapGet("/me", MeAsync).RequireAuthorization().WithSummary("Who is signed in, and their roles");
        auth.MapPost("/password", ChangePasswordAsync).RequireAuthorization().WithSummary("Change your own password");
    }

    private static async Task<IResult> LoginAsync(LoginRequest login, bool? useCookies, SignInManager<StaffUser> signIn)
    {
        signIn.AuthenticationScheme = useCookies == true ? IdentityConstants.ApplicationScheme : IdentityConstants.BearerScheme;
        var result = await signIn.PasswordSignInAsync(login.UserName, login.Password, isPersistent: useCookies == true, lockoutOnFailure: true);
        if (result.IsLockedOut)
        {
            return Problems.Of(StatusCodes.Status423Locked, "Account locked",
                "Too many wrong passwords (Auth:MaxFailedSignIns): this account is locked for Auth:LockoutMinutes, or disabled by an admin.");
        }

        if (!result.Succeeded)
        {
            return Problems.Of(StatusCodes.Status401Unauthorized, "Sign-in failed", "The user name or the password is wrong.");
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

    private static async Task<IResult> LogoutAsync(SignInManager<StaffUser> signIn)
    {
        await signIn.SignOutAsync();
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

/// <summary>Identity's errors as a validation problem.</summary>
internal static class IdentityProblems
{
    public static IResult From(IdentityResult result) =>
        TypedResults.ValidationProblem(result.Errors.GroupBy(e => e.Code).ToDictionary(g => g.Key, g => g.Select(e => e.Description).ToArray()));
}

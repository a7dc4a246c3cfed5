using Microsoft.AspNetCore.Authentication;
using System.Security.Claims;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Identity;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Server.Api;

/// <summary>
/// Whether a signed-in principal still stands for its account as the account is now: the security stamp it was issued
/// with is the account's current one (an admin replacing the roles, disabling the account or resetting its password
/// changes the stamp). One lookup of the account by key. Until the registry is ready, nobody is signed in.
/// </summary>
internal static class StaffGrant
{
    public static async Task<bool> IsCurrentAsync(IServiceProvider services, ClaimsPrincipal principal) =>
        services.GetRequiredService<RegistryMigrator>().Ready.IsCompletedSuccessfully
        && await services.GetRequiredService<SignInManager<StaffUser>>().ValidateSecurityStampAsync(principal) is not null;

    /// <summary>The sign-in cookie's check on every request (in place of Identity's every 30 minutes).</summary>
    public static async Task ValidateCookieAsync(CookieValidatePrincipalContext context)
    {
        if (context.Principal is not { } principal || !await IsCurrentAsync(context.HttpContext.RequestServices, principal))
        {
            context.RejectPrincipal();
            await context.HttpContext.SignOutAsync(IdentityConstants.ApplicationScheme);
        }
    }
}

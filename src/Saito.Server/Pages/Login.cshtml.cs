using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Identity;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Saito.Registry.Model;

namespace Saito.Server.Pages;

/// <summary>Staff sign in with the same accounts as the API (a cookie, SameSite=Strict); anyone may open this page.</summary>
[AllowAnonymous]
public sealed class LoginModel(SignInManager<StaffUser> signIn) : PageModel
{
    [BindProperty(SupportsGet = true)]
    public string? ReturnUrl { get; set; }

    [BindProperty]
    public string? UserName { get; set; }

    [BindProperty]
    public string? Password { get; set; }

    public string? Error { get; private set; }

    public void OnGet()
    {
    }

    public async Task<IActionResult> OnPostAsync()
    {
        if (string.IsNullOrWhiteSpace(UserName) || string.IsNullOrEmpty(Password) || UserName.Length > 256 || Password.Length > 256)
        {
            Error = "Give your user name and password.";
            return Page();
        }

        signIn.AuthenticationScheme = IdentityConstants.ApplicationScheme;
        if (!await Api.StaffSignIn.PasswordAsync(signIn, UserName, Password, persistent: false))
        {
            // One message for every refusal, as the API answers (an account's existence is not told).
            Error = "The user name or the password is wrong, or the account is locked for a while after too many wrong passwords, or disabled by an admin.";
            return Page();
        }

        return LocalRedirect(Url.IsLocalUrl(ReturnUrl) ? ReturnUrl : "/");
    }
}

/// <summary>Sign out (POST, with the page's antiforgery token).</summary>
public sealed class LogoutModel(SignInManager<StaffUser> signIn) : PageModel
{
    public async Task<IActionResult> OnPostAsync()
    {
        await Api.StaffSignIn.SignOutAsync(signIn, User);
        return LocalRedirect("/login");
    }
}

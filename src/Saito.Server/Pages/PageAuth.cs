namespace Saito.Server.Pages;

/// <summary>
/// Pages authenticate with the sign-in cookie only (the API also takes bearer tokens), so an anonymous browser is sent
/// to /login and a role without access to /denied, instead of getting the API's bare 401 or 403.
/// </summary>
internal static class PageAuth
{
    public const string Scheme = "Identity.Application";
}

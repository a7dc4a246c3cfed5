using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc.RazorPages;

namespace Saito.Server.Pages;

[Authorize(AuthenticationSchemes = PageAuth.Scheme)]
public sealed class DeniedModel : PageModel
{
    // The page explains, and the status says it too (a script or a monitor reads the code, not the words).
    public void OnGet() => Response.StatusCode = StatusCodes.Status403Forbidden;
}

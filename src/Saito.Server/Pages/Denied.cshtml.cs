using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc.RazorPages;

namespace Saito.Server.Pages;

[Authorize(AuthenticationSchemes = PageAuth.Scheme)]
public sealed class DeniedModel : PageModel
{
    public void OnGet()
    {
    }
}

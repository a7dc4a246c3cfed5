using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc.RazorPages;

namespace Saito.Server.Pages;

[Authorize]
public sealed class DeniedModel : PageModel
{
    public void OnGet()
    {
    }
}

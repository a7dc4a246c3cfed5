using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.BearerToken;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.Identity;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Server.Dashboard;
using Saito.Server.Security;
using Scalar.AspNetCore;

namespace Saito.Server.Api;

public static class ApiHosting
{
    /// <summary>
    /// The REST API: staff accounts (ASP.NET Core Identity on the registry's tables: a cookie for the browser, bearer
    /// tokens for automation), the role policies of <see cref="ApiPolicies"/>, problem details for every error,
    /// request validation, the JSON conventions of <see cref="ApiJson"/>, and the OpenAPI document.
    /// </summary>
    public static IHostApplicationBuilder AddSaitoApi(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        services.AddOptions<AuthOptions>().BindConfiguration(AuthOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<AuthOptions>, AuthOptionsValidator>();
        // With an external broker AddSaitoSecurity is not called, and the API hashes secrets with these.
        SecurityExtensions.AddSecurityOptions(services);
        var auth = builder.Configuration.GetSection(AuthOptions.SectionName).Get<AuthOptions>() ?? new AuthOptions();

        services.AddDataProtection()
            .SetApplicationName("Saito")
            .PersistKeysToFileSystem(new DirectoryInfo(Path.GetFullPath(auth.KeysPath)));

        services.AddIdentityApiEndpoints<StaffUser>(o =>
            {
                o.Password.RequiredLength = Math.Max(8, auth.MinPasswordLength);
                o.Password.RequireNonAlphanumeric = false;
                o.Password.RequireUppercase = false;
                o.Password.RequireLowercase = false;
                o.Password.RequireDigit = false;
                o.Lockout.AllowedForNewUsers = true;
                o.Lockout.MaxFailedAccessAttempts = Math.Max(1, auth.MaxFailedSignIns);
                o.Lockout.DefaultLockoutTimeSpan = TimeSpan.FromMinutes(Math.Max(1, auth.LockoutMinutes));
                o.User.AllowedUserNameCharacters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._@";
            })
            .AddRoles<IdentityRole<int>>()
            .AddEntityFrameworkStores<RegistryDbContext>();
        services.Configure<BearerTokenOptions>(IdentityConstants.BearerScheme, o =>
        {
            o.BearerTokenExpiration = TimeSpan.FromMinutes(Math.Max(1, auth.BearerTokenMinutes));
            o.RefreshTokenExpiration = TimeSpan.FromDays(Math.Max(1, auth.RefreshTokenDays));
        });
        services.ConfigureApplicationCookie(o =>
        {
            o.Cookie.Name = "saito.auth";
            o.Cookie.HttpOnly = true;
            o.Cookie.SameSite = SameSiteMode.Strict;
            o.ExpireTimeSpan = TimeSpan.FromHours(Math.Max(1, auth.CookieHours));
            o.SlidingExpiration = true;
            // Every request, not Identity's every 30 minutes: a changed or disabled account is signed out at once.
            o.Events.OnValidatePrincipal = StaffGrant.ValidateCookieAsync;
            // The API, the live hub and /metrics answer 401/403; the staff pages send the browser to /login
            // (or to a page that says what this account may not see).
            o.LoginPath = "/login";
            o.AccessDeniedPath = "/denied";
            o.Events.OnRedirectToLogin = PageRedirectOr(StatusCodes.Status401Unauthorized);
            o.Events.OnRedirectToAccessDenied = PageRedirectOr(StatusCodes.Status403Forbidden);
        });

        var authorization = services.AddAuthorizationBuilder();
        foreach (var (policy, roles) in ApiPolicies.Roles)
        {
            authorization.AddPolicy(policy, p => p.RequireAuthenticatedUser().RequireRole(roles));
        }

        // The API's description: for signed-in staff, or anyone on this machine (loopback, and not forwarded by a proxy:
        // HealthCallers.IsLocal, as /health and /metrics decide it).
        authorization.AddPolicy(DocsPolicy, p => p.RequireAssertion(context =>
            context.User.Identity?.IsAuthenticated == true
            || (context.Resource is HttpContext http && HealthCallers.IsLocal(http))));

        services.AddProblemDetails();
        services.AddExceptionHandler<BadRequestHandler>();
        services.Configure<RouteHandlerOptions>(o => o.ThrowOnBadRequest = true);
        services.AddValidation();
        services.ConfigureHttpJsonOptions(o => ApiJson.Configure(o.SerializerOptions));
        services.AddOpenApi(o => o.AddDocumentTransformer((document, _, _) =>
        {
            document.Info.Title = "Saito API";
            document.Info.Description = "Owners, contacts, devices, assignments, check-ins, notices, hubs and readings. Sign in with POST /api/auth/login. Who may call what: docs/api.md.";
            return Task.CompletedTask;
        }));
        return builder;
    }

    private const string DocsPolicy = "api.docs";

    /// <summary>A browser asking for a staff page (not the API, the live hub, /metrics or the API's description).</summary>
    private static bool IsPage(HttpRequest request) =>
        HttpMethods.IsGet(request.Method)
        && !request.Path.StartsWithSegments("/api") && !request.Path.StartsWithSegments("/live")
        && !request.Path.StartsWithSegments("/metrics") && !request.Path.StartsWithSegments("/openapi") && !request.Path.StartsWithSegments("/scalar");

    /// <summary>The cookie's redirect: a page is sent on to it (/login, /denied); anything else just gets <paramref name="statusCode"/>.</summary>
    private static Func<RedirectContext<CookieAuthenticationOptions>, Task> PageRedirectOr(int statusCode) => context =>
    {
        if (IsPage(context.Request))
        {
            context.Response.Redirect(context.RedirectUri);
        }
        else
        {
            context.Response.StatusCode = statusCode;
        }

        return Task.CompletedTask;
    };

    /// <summary>Maps <c>/api/...</c>, <c>/openapi/v1.json</c> and the reference at <c>/scalar</c>.</summary>
    public static WebApplication MapSaitoApi(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.Use(CrossOriginGuard.InvokeAsync);
        app.UseAuthentication();
        app.Use(CurrentGrantAsync);
        app.UseAuthorization();

        var api = app.MapGroup("/api").AddEndpointFilter(RegistryReady).AddEndpointFilter(TellLiveView);
        api.MapAuthEndpoints();
        api.MapUserEndpoints();
        api.MapOwnerEndpoints();
        api.MapDeviceEndpoints();
        api.MapClassEndpoints();
        api.MapCheckInEndpoints();
        api.MapNoticeEndpoints();
        api.MapReadingEndpoints();
        api.MapHubEndpoints();
        api.MapDashboardEndpoints();
        api.MapStudentCharts();

        app.MapOpenApi().RequireAuthorization(DocsPolicy);
        app.MapScalarApiReference("/scalar", ConfigureReference).RequireAuthorization(DocsPolicy);
        return app;
    }

    /// <summary>
    /// The reference as a school's box serves it: nothing from the internet (the box may be offline, and who reads the API
    /// is nobody else's business), so the browser's own fonts rather than Scalar's font CDN; and none of the vendor's offers
    /// (its AI chat "Ask AI" and MCP, its API client, and the developer tools, whose "never" also hides "Generate SDK").
    /// Scalar shows the AI chat and the tools by default on localhost, where a newcomer first opens the page.
    /// </summary>
    private static void ConfigureReference(ScalarOptions options) => options
        .WithTitle("Saito API")
        .DisableDefaultFonts()
        .DisableAgent()
        .DisableMcp()
        .HideClientButton()
        .HideDeveloperTools();

    /// <summary>
    /// A request with a bearer token whose account changed after the token was issued (roles replaced, disabled, password
    /// reset: each changes the account's security stamp) is treated as signed out. Identity checks a bearer token's account
    /// only when it is refreshed, so a demoted or disabled account kept its old roles for up to
    /// <see cref="AuthOptions.BearerTokenMinutes"/>. The sign-in cookie is checked the same way, in its own handler
    /// (<see cref="StaffGrant.ValidateCookieAsync"/>), so that the pages, which authenticate with the cookie alone, are covered.
    /// </summary>
    private static async Task CurrentGrantAsync(HttpContext context, RequestDelegate next)
    {
        if (context.User.Identity?.IsAuthenticated == true
            && context.Request.Headers.Authorization.ToString().StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase)
            && !await StaffGrant.IsCurrentAsync(context.RequestServices, context.User))
        {
            context.User = new System.Security.Claims.ClaimsPrincipal(new System.Security.Claims.ClaimsIdentity());
        }

        await next(context);
    }

    /// <summary>A change made through the API (a check-in, an assignment, a roster) reaches the live dashboards at once.</summary>
    private static async ValueTask<object?> TellLiveView(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var result = await next(context);
        if (!HttpMethods.IsGet(context.HttpContext.Request.Method))
        {
            context.HttpContext.RequestServices.GetRequiredService<Dashboard.LiveSignal>().RegistryChanged();
            context.HttpContext.RequestServices.GetRequiredService<Dashboard.LiveConnections>().AccessMayHaveChanged();
        }

        return result;
    }

    /// <summary>Until the registry's migrations are applied every API call answers 503 (and says why when they failed).</summary>
    private static async ValueTask<object?> RegistryReady(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var ready = context.HttpContext.RequestServices.GetRequiredService<RegistryMigrator>().Ready;
        if (!ready.IsCompletedSuccessfully)
        {
            return Problems.Of(StatusCodes.Status503ServiceUnavailable, "Registry not ready",
                ready.IsFaulted
                    ? "The registry's database could not be prepared at start (see Saito's log); readings are still ingested."
                    : "Saito is preparing the registry's database; try again in a moment.");
        }

        return await next(context);
    }
}

using Microsoft.AspNetCore.Mvc.ApplicationParts;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Live.Alerts;
using Saito.Live.Analytics;

namespace Saito.Server.Dashboard;

/// <summary>
/// The staff pages (Razor Pages in <c>Pages/</c>), their live connection (<see cref="LiveHub"/> at <c>/live/hub</c>),
/// the live view that feeds it from committed readings (<see cref="LiveClassroom"/>), the alert engine's options
/// (<c>Alerts</c>), sway and mat options (<c>Dashboard:Sway</c>, <c>Dashboard:Mat</c>), and the browser files at
/// <c>/static/</c> (embedded in this assembly). docs/dashboard.md says what each page shows and who may open it.
/// </summary>
public static class DashboardHosting
{
    public const string HubPath = "/live/hub";

    public static IHostApplicationBuilder AddSaitoDashboard(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        services.AddOptions<DashboardOptions>().BindConfiguration(DashboardOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<DashboardOptions>, DashboardOptionsValidator>();
        services.AddOptions<AlertOptions>().BindConfiguration(AlertOptions.Section).ValidateOnStart();
        services.AddSingleton<IValidateOptions<AlertOptions>>(new ListValidator<AlertOptions>(o => o.Validate()));
        services.AddOptions<SwayOptions>().BindConfiguration(SwayOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<SwayOptions>>(new ListValidator<SwayOptions>(o => o.Validate()));
        services.AddOptions<MatOptions>().BindConfiguration(MatOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<MatOptions>>(new ListValidator<MatOptions>(o => o.Validate()));

        services.AddSingleton<LiveFeed>();
        services.AddSingleton<ICommittedReadingsObserver>(sp => sp.GetRequiredService<LiveFeed>());
        services.AddSingleton<LiveSignal>();
        services.AddSingleton<LiveConnections>();
        services.AddSingleton<LiveAccessCheck>();
        services.AddHostedService(sp => sp.GetRequiredService<LiveAccessCheck>());
        services.AddSingleton<DashboardAccess>();
        services.AddSingleton<LivePublisher>();
        services.AddHostedService(sp => sp.GetRequiredService<LivePublisher>());
        services.AddSingleton<AlertRecorder>();
        services.AddHostedService(sp => sp.GetRequiredService<AlertRecorder>());
        services.AddSingleton<VitalsAudit>();
        services.AddHostedService(sp => sp.GetRequiredService<VitalsAudit>());
        services.AddSingleton<LiveClassroom>();
        services.AddHostedService(sp => sp.GetRequiredService<LiveClassroom>());
        services.AddSignalR(o =>
        {
            // Dashboards send small calls (watch a class, acknowledge an alert).
            o.MaximumReceiveMessageSize = 4 * 1024;
        });
        // The pages are compiled into this assembly; when the host is not Saito.Server itself (the tests run it in
        // process) the entry assembly is not this one, so name it.
        var assembly = typeof(DashboardHosting).Assembly;
        services.AddRazorPages().ConfigureApplicationPartManager(parts =>
        {
            if (!parts.ApplicationParts.Any(p => p.Name == assembly.GetName().Name))
            {
                foreach (var part in ApplicationPartFactory.GetApplicationPartFactory(assembly).GetApplicationParts(assembly))
                {
                    parts.ApplicationParts.Add(part);
                }
            }
        });
        return builder;
    }

    public static WebApplication MapSaitoDashboard(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        app.Use(static (context, next) =>
        {
            if (IsPageOrAsset(context.Request.Path))
            {
                // The pages run only their own scripts and styles, talk only to Saito, and are never framed.
                var headers = context.Response.Headers;
                headers.ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                    + "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'";
                headers.XContentTypeOptions = "nosniff";
                headers["Referrer-Policy"] = "no-referrer";
                headers.XFrameOptions = "DENY";
            }

            return next(context);
        });
        app.UseStaticFiles(new StaticFileOptions
        {
            FileProvider = new EmbeddedFileProvider(typeof(DashboardHosting).Assembly, "saito.static"),
            RequestPath = "/static",
            OnPrepareResponse = context => context.Context.Response.Headers.XContentTypeOptions = "nosniff",
        });
        // Browsers and tools ask for /favicon.ico whatever a page links; the icon is the same for everyone.
        app.MapGet("/favicon.ico", static () => Results.Redirect("/static/favicon.svg", permanent: true)).AllowAnonymous().ExcludeFromDescription();
        app.MapHub<LiveHub>(HubPath).Add(static endpoint =>
        {
            // Dashboard:MaxConnectionsPerUser: an account already at its limit is refused before a connection is
            // opened (negotiate or WebSocket upgrade), with a reason. LiveHub.OnConnectedAsync still closes a
            // connection that got past this check while others of the account were opening at the same moment.
            var inner = endpoint.RequestDelegate!;
            endpoint.RequestDelegate = context =>
            {
                int max = context.RequestServices.GetRequiredService<IOptions<DashboardOptions>>().Value.MaxConnectionsPerUser;
                if (context.User.Identity?.IsAuthenticated == true
                    && context.RequestServices.GetRequiredService<LiveConnections>().Of(DashboardAccess.UserName(context.User)) >= max)
                {
                    context.Response.StatusCode = StatusCodes.Status429TooManyRequests;
                    return context.Response.WriteAsync(System.FormattableString.Invariant(
                        $"This account already has {max} live connections open (Dashboard:MaxConnectionsPerUser). Close a dashboard and try again."));
                }

                return inner(context);
            };
        });
        app.MapRazorPages();
        return app;
    }

    private static bool IsPageOrAsset(PathString path) =>
        !path.StartsWithSegments("/api") && !path.StartsWithSegments("/scalar") && !path.StartsWithSegments("/openapi")
        && !path.StartsWithSegments("/metrics") && !path.StartsWithSegments("/health") && !path.StartsWithSegments("/mqtt")
        && !path.StartsWithSegments(HubPath);

    /// <summary>Options whose class says what is wrong as a list of sentences.</summary>
    private sealed class ListValidator<T>(Func<T, IEnumerable<string>> validate) : IValidateOptions<T>
        where T : class
    {
        public ValidateOptionsResult Validate(string? name, T options)
        {
            var failures = validate(options).ToList();
            return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
        }
    }
}

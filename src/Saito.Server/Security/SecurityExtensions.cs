using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Server.Security;

public static class SecurityExtensions
{
    /// <summary>The broker's authenticator (the credentials file) and topic ACL (docs/security.md).</summary>
    public static IHostApplicationBuilder AddSaitoSecurity(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        AddSecurityOptions(builder.Services);
        AddHubSites(builder.Services);
        builder.Services.AddSingleton<SaitoAuthenticator>();
        builder.Services.AddSingleton<IMqttAuthenticator>(sp => sp.GetRequiredService<SaitoAuthenticator>());
        builder.Services.AddSingleton<IMqttAuthorizer, SaitoTopicAuthorizer>();
        return builder;
    }

    /// <summary>
    /// The credentials file (read again when it changes) and the hubs' sites from it, which ingestion checks a device's
    /// hub against (<see cref="Saito.Ingestion.Pipeline.IHubSites"/>); with an external broker too, where the file holds
    /// the hubs' sites only.
    /// </summary>
    internal static void AddHubSites(IServiceCollection services)
    {
        AddSecurityOptions(services);
        if (services.Any(d => d.ServiceType == typeof(CredentialsCache)))
        {
            return;
        }

        services.AddSingleton(sp => new CredentialsCache(sp.GetRequiredService<IOptions<SecurityOptions>>().Value.CredentialsFile, sp.GetRequiredService<ILogger<CredentialsCache>>()));
        services.AddSingleton<Saito.Ingestion.Pipeline.IHubSites, CredentialHubSites>();
    }

    /// <summary>The <c>Security</c> section, bound and validated at start; once, however many parts of Saito ask for it.</summary>
    internal static void AddSecurityOptions(IServiceCollection services)
    {
        // Bound twice, a list setting (SubscribeRoles) would hold each item twice, and a bad value be reported twice.
        if (services.Any(d => d.ServiceType == typeof(IValidateOptions<SecurityOptions>)))
        {
            return;
        }

        services.AddOptions<SecurityOptions>().BindConfiguration(SecurityOptions.SectionName).ValidateDataAnnotations().ValidateOnStart();
    }
}

using Saito.Mqtt.Broker;

namespace Saito.Server.Security;

public static class SecurityExtensions
{
    /// <summary>The broker's authenticator (the credentials file) and topic ACL (docs/security.md).</summary>
    public static IHostApplicationBuilder AddSaitoSecurity(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.AddOptions<SecurityOptions>().BindConfiguration(SecurityOptions.SectionName).ValidateDataAnnotations().ValidateOnStart();
        builder.Services.AddSingleton<SaitoAuthenticator>();
        builder.Services.AddSingleton<IMqttAuthenticator>(sp => sp.GetRequiredService<SaitoAuthenticator>());
        builder.Services.AddSingleton<IMqttAuthorizer, SaitoTopicAuthorizer>();
        return builder;
    }
}

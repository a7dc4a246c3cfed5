using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server.Features;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// Saito listens on the <c>urls</c> addresses in code, beside the MQTT ports (<see cref="MqttHostingExtensions"/>). The host
/// also copies them into the server's addresses, and Kestrel, given both, binds what code configured and warns
/// "Overriding address(es)" on every start with <c>--urls</c>, though nothing is overridden. Startup filters run after the
/// host has filled the addresses and before Kestrel binds: the copies of what Saito listens on are taken out there. An
/// address Saito does not listen on (<c>HTTP_PORTS</c>, say) stays, and Kestrel still warns about it, rightly.
/// </summary>
internal sealed class UrlsListenedInCode(string urls) : IStartupFilter
{
    private readonly HashSet<string> _listened = new(
        urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries), StringComparer.OrdinalIgnoreCase);

    public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
    {
        if (app.ServerFeatures.Get<IServerAddressesFeature>()?.Addresses is { IsReadOnly: false } addresses)
        {
            foreach (string address in addresses.Where(a => _listened.Contains(a.Trim())).ToList())
            {
                addresses.Remove(address);
            }
        }

        next(app);
    };
}

using System.Net;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// Where Saito's HTTP side listens, from every place that can say so: <c>--urls</c> (or <c>ASPNETCORE_URLS</c>,
/// else <see cref="MqttHostingExtensions.DefaultUrls"/>) and each <c>Kestrel:Endpoints:{name}:Url</c>, which Kestrel
/// binds beside the addresses Saito listens on in code. "Loopback only" (anonymous MQTT by default, the host-name
/// allow-list) was decided from <c>--urls</c> alone, so an extra endpoint on 0.0.0.0 let anyone on the network subscribe
/// to every reading. After start, <see cref="ListenerCheck"/> asks Kestrel what it actually bound as well.
/// </summary>
public static class ListenerAddresses
{
    /// <summary>Every HTTP address configured: <c>urls</c> (or the default) and the <c>Kestrel:Endpoints</c> section's.</summary>
    public static IReadOnlyList<string> HttpUrls(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        string urls = configuration["urls"] is { Length: > 0 } configured ? configured : MqttHostingExtensions.DefaultUrls;
        var all = urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).ToList();
        foreach (var endpoint in configuration.GetSection("Kestrel:Endpoints").GetChildren())
        {
            if (endpoint["Url"] is { Length: > 0 } url)
            {
                all.Add(url.Trim());
            }
        }

        return all;
    }

    /// <summary>The <c>urls</c> setting alone (or the default): the addresses Saito itself listens on in code.</summary>
    public static string Urls(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        return configuration["urls"] is { Length: > 0 } configured ? configured : MqttHostingExtensions.DefaultUrls;
    }

    /// <summary>
    /// Whether a URL Kestrel binds (<c>http://127.0.0.1:5000</c>, <c>http://[::]:5000</c>, <c>http://*:5000</c>) reaches
    /// this machine only. A Unix socket (<c>http://unix:/run/saito.sock</c>) counts as this machine: its file's mode decides.
    /// A host name other than localhost, or one that does not parse, is not loopback (Kestrel binds every interface for it).
    /// </summary>
    public static bool IsLoopbackUrl(string url)
    {
        ArgumentNullException.ThrowIfNull(url);
        BindingAddress address;
        try
        {
            address = BindingAddress.Parse(url);
        }
        catch (FormatException)
        {
            return false;
        }

        return address.IsUnixPipe || address.IsNamedPipe || IsLoopbackHost(address.Host);
    }

    /// <summary><c>localhost</c>, an address in 127.0.0.0/8, <c>::1</c> (bracketed or not), or an IPv4-mapped loopback address.</summary>
    public static bool IsLoopbackHost(string? host)
    {
        if (string.IsNullOrEmpty(host))
        {
            return false;
        }

        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }

        if (!IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            return false;
        }

        return IPAddress.IsLoopback(ip.IsIPv4MappedToIPv6 ? ip.MapToIPv4() : ip);
    }
}

using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Server.Security;

/// <summary>
/// Checks MQTT credentials against the credentials file: the user name is the client's name, the password its secret;
/// or a TLS client certificate (already chained to <c>Mqtt:ClientCaPath</c> by the TLS layer) whose common name is the
/// client's name. A disabled client, an unknown name or a wrong secret is refused, all three alike (0x04, bad user
/// name or password, after one PBKDF2 check), so that the answer does not tell which names exist. The file is reread when it changes
/// (<see cref="CredentialsCache"/>), so <c>saito hubs rotate</c> or <c>disable</c> takes effect at the next CONNECT
/// without a restart.
/// </summary>
/// <remarks>
/// PBKDF2 is deliberately slow, so a success is remembered (the SHA-256 of the secret, per client and stored hash) and a
/// hub reconnecting does not pay it again; verifications run one at a time, so a storm of bad passwords costs at most
/// one core while established connections carry on; and an address with <c>Security:MaxFailedLoginsPerAddress</c> failures in
/// its window is refused without a check (<see cref="FailedLogins"/>), so a few flooding addresses do not keep every
/// other hub waiting behind their checks.
/// </remarks>
internal sealed partial class SaitoAuthenticator(IOptions<SecurityOptions> options, CredentialsCache credentials, ILogger<SaitoAuthenticator> logger)
    : IMqttAuthenticator, IDisposable
{
    private readonly SemaphoreSlim _hashing = new(1, 1);
    private readonly FailedLogins _failures = new(options.Value.MaxFailedLoginsPerAddress, TimeSpan.FromSeconds(options.Value.FailedLoginWindowSeconds));
    private readonly ConcurrentDictionary<string, (string Hash, byte[] Digest)> _verified = new(StringComparer.Ordinal);
    private string? _nobodysHash;

    public string CredentialsPath => credentials.Path;

    public async ValueTask<MqttAuthenticationOutcome> AuthenticateAsync(MqttAuthenticationContext context, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(context);
        var address = (context.RemoteEndPoint as System.Net.IPEndPoint)?.Address;
        if (address is { IsIPv4MappedToIPv6: true })
        {
            address = address.MapToIPv4();
        }

        if (address is not null && _failures.IsBlocked(address, out bool firstRefusal))
        {
            if (firstRefusal)
            {
                LogBlocked(address.ToString(), options.Value.MaxFailedLoginsPerAddress, options.Value.FailedLoginWindowSeconds);
            }

            return MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.NotAuthorized);
        }

        var outcome = await CheckAsync(context, cancellationToken);
        if (outcome.Result != MqttAuthenticationResult.Success && address is not null)
        {
            _failures.Fail(address);
        }

        return outcome;
    }

    private async ValueTask<MqttAuthenticationOutcome> CheckAsync(MqttAuthenticationContext context, CancellationToken cancellationToken)
    {
        var clients = credentials.Current();
        string remote = context.RemoteEndPoint?.ToString() ?? "?";
        string? certificateName = context.ClientCertificate?.GetNameInfo(X509NameType.SimpleName, forIssuer: false);
        string? name = context.UserName ?? certificateName;
        var client = name is not null && clients.TryGetValue(name, out var found) ? found : null;
        string? unusable = client is null ? "unknown client" : client.Disabled ? "disabled" : null;
        if (certificateName is not null && unusable is null)
        {
            if (!string.Equals(certificateName, name, StringComparison.Ordinal))
            {
                LogRefused(LogText.Safe(name), remote, $"user name differs from the certificate's name '{LogText.Safe(certificateName)}'");
                return MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.NotAuthorized);
            }

            if (context.Password is null)
            {
                return MqttAuthenticationOutcome.Accepted(Identity(client!));
            }
        }

        // From here an unknown or disabled name is answered as a wrong secret is, after the same hash work: a different
        // code (0x05 against 0x04) or a quicker answer told which hub names exist.
        if (context.Password is not { } password)
        {
            LogRefused(LogText.Safe(name), remote, unusable ?? "no secret");
            return MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.BadUserNameOrPassword);
        }

        string? hash = unusable is null ? client!.SecretHash : null;
        byte[] digest = SHA256.HashData(password.Span);
        if (hash is not null && _verified.TryGetValue(name!, out var known) && known.Hash == hash && CryptographicOperations.FixedTimeEquals(known.Digest, digest))
        {
            return MqttAuthenticationOutcome.Accepted(Identity(client!));
        }

        bool ok;
        await _hashing.WaitAsync(cancellationToken);
        try
        {
            ok = SecretHash.Verify(password.Span, hash ?? NobodysHash()) && hash is not null;
        }
        finally
        {
            _hashing.Release();
        }

        if (!ok)
        {
            LogRefused(LogText.Safe(name), remote, unusable ?? (hash is null ? "no secret" : "wrong secret"));
            return MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.BadUserNameOrPassword);
        }

        _verified[name!] = (hash!, digest);
        return MqttAuthenticationOutcome.Accepted(Identity(client!));
    }

    /// <summary>A hash of a random secret nobody holds, made once with the configured iterations: what an unknown name's secret is checked against.</summary>
    private string NobodysHash() => _nobodysHash ??= SecretHash.Hash(SecretHash.NewSecret(), options.Value.HashIterations);

    private static MqttClientIdentity Identity(Credential client) => new(client.Name, client.Roles);

    public void Dispose() => _hashing.Dispose();

    [LoggerMessage(5101, LogLevel.Warning, "MQTT client '{Name}' from {Remote} refused: {Why}")]
    private partial void LogRefused(string name, string remote, string why);

    [LoggerMessage(5104, LogLevel.Warning, "MQTT logins from {Address} refused without a check for the rest of the window: {Max} failed in {WindowSeconds} s (Security:MaxFailedLoginsPerAddress)")]
    private partial void LogBlocked(string address, int max, int windowSeconds);
}

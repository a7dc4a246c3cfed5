using System.Diagnostics;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Packets;
using Saito.Server.Security;

namespace Saito.Server.Tests.Security;

/// <summary>
/// Who gets in and what they may do, tried with real clients (mosquitto_pub/sub) and raw packets: hubs with the
/// secrets <c>saito hubs add</c> printed, a dashboard by role, anonymous clients refused, the ACL's reason codes.
/// </summary>
public sealed class AccessControlTests : IAsyncLifetime
{
    private readonly string _directory = Directory.CreateTempSubdirectory("saito-acl-test-").FullName;
    private SaitoHost? _saito;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private string CredentialsFile => Path.Combine(_directory, "credentials.json");

    private SaitoHost Saito => _saito!;

    private string HubCaPath => Path.Combine(_directory, "hub-ca.crt");

    public async ValueTask InitializeAsync()
    {
        // The CA whose certificates identify hubs (Mqtt:ClientCaPath); its key signs client certificates in the test.
        _hubCaKey = RSA.Create(2048);
        var request = new CertificateRequest("CN=Saito Hubs CA", _hubCaKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign, true));
        _hubCa = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddYears(1));
        await File.WriteAllTextAsync(HubCaPath, _hubCa.ExportCertificatePem(), Token);
        _saito = await SaitoHost.StartAsync(["Mqtt:AllowAnonymous=false", $"Security:CredentialsFile={CredentialsFile}", $"Mqtt:ClientCaPath={HubCaPath}"]);

        // Readings are refused ("preparing the database") until the schema is ready, which on a busy machine can be
        // after the first publish: the tests here are about access, so they start once storage is ready.
        await _saito.Services.GetRequiredService<Saito.Ingestion.Pipeline.StorageStartup>().Ready.WaitAsync(TimeSpan.FromSeconds(60), Token);
    }

    private RSA? _hubCaKey;
    private X509Certificate2? _hubCa;

    /// <summary>A client certificate for <paramref name="name"/> signed by <paramref name="issuer"/> (or self-signed), as PEM files.</summary>
    private (string Cert, string Key) ClientCertificate(string name, X509Certificate2? issuer, string file)
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.2")], false));
        var now = DateTimeOffset.UtcNow;
        using var cert = issuer is null
            ? request.CreateSelfSigned(now.AddDays(-1), now.AddYears(1))
            : request.Create(issuer.SubjectName, X509SignatureGenerator.CreateForRSA(_hubCaKey!, RSASignaturePadding.Pkcs1), now.AddDays(-1), now.AddYears(1), RandomNumberGenerator.GetBytes(16));
        string certPath = Path.Combine(_directory, file + ".crt");
        string keyPath = Path.Combine(_directory, file + ".key");
        File.WriteAllText(certPath, cert.ExportCertificatePem());
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem());
        return (certPath, keyPath);
    }

    public async ValueTask DisposeAsync()
    {
        if (_saito is not null)
        {
            await _saito.DisposeAsync();
        }

        _hubCa?.Dispose();
        _hubCaKey?.Dispose();
        Directory.Delete(_directory, recursive: true);
    }

    /// <summary>Runs <c>saito hubs|clients ...</c> as the command line does and returns the secret it printed.</summary>
    private string Cli(params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        var configuration = new ConfigurationBuilder().AddInMemoryCollection([new("Security:CredentialsFile", CredentialsFile)]).Build();
        int rc = CredentialsCli.Run(args, configuration, output, error);
        rc.ShouldBe(0, error.ToString());
        return output.ToString().Split('\n').FirstOrDefault(l => l.StartsWith("Secret", StringComparison.Ordinal))?.Split(": ", 2)[1].Trim() ?? string.Empty;
    }

    private static Task<(int ExitCode, string Output)> RunAsync(string program, params string[] args) =>
        ExternalCommand.RunAsync(program, args, TimeSpan.FromSeconds(20), Token);

    private string[] Pub(string? user, string? password, string topic, string version = "mqttv311")
    {
        var args = new List<string> { "-h", "127.0.0.1", "-p", Saito.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-q", "1", "-t", topic, "-m", "{\"hr\":72}", "-V", version };
        if (user is not null)
        {
            args.AddRange(["-u", user, "-P", password!]);
        }

        return [.. args];
    }

    [Fact]
    public async Task A_hub_with_its_secret_publishes_and_a_client_without_credentials_or_with_a_wrong_secret_is_refused()
    {
        string secret = Cli("hubs", "add", "hub-1");
        var ok = await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-1", secret, "saito/hub-1/wrist-1/biosensor"));
        ok.ExitCode.ShouldBe(0, ok.Output);

        var anonymous = await RunAsync(ExternalClientSettings.MosquittoPub, Pub(null, null, "saito/hub-1/wrist-1/biosensor"));
        anonymous.ExitCode.ShouldNotBe(0);
        anonymous.Output.ShouldContain("not authorised");

        var wrong = await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-1", secret + "x", "saito/hub-1/wrist-1/biosensor"));
        wrong.ExitCode.ShouldNotBe(0);
        wrong.Output.ShouldContain("bad user name or password");
    }

    [Fact]
    public async Task Rotate_and_disable_take_effect_at_the_next_connect_without_a_restart()
    {
        string first = Cli("hubs", "add", "hub-2");
        (await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-2", first, "saito/hub-2/w/biosensor"))).ExitCode.ShouldBe(0);
        string second = Cli("hubs", "rotate", "hub-2");
        (await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-2", first, "saito/hub-2/w/biosensor"))).ExitCode.ShouldNotBe(0, "the old secret stops working");
        (await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-2", second, "saito/hub-2/w/biosensor"))).ExitCode.ShouldBe(0);
        Cli("hubs", "disable", "hub-2");
        (await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-2", second, "saito/hub-2/w/biosensor"))).ExitCode.ShouldNotBe(0, "a disabled hub is refused");
        File.ReadAllText(CredentialsFile).ShouldNotContain(second, Case.Sensitive, "only the hash is kept");
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task A_hub_cannot_publish_under_another_hub_nor_subscribe_to_other_hubs_readings(MqttProtocolVersion version)
    {
        string secret = Cli("hubs", "add", "hub-3");
        await using var hub = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token);
        await hub.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = "hub-3-" + version, UserName = "hub-3", Password = Encoding.UTF8.GetBytes(secret) });
        hub.Version = version;
        (await hub.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe((byte)0);

        await hub.SendAsync(new SubscribePacket
        {
            PacketId = 1,
            Subscriptions =
            [
                new MqttSubscription { TopicFilter = "#", QoS = MqttQoS.AtLeastOnce },
                new MqttSubscription { TopicFilter = "saito/+/+/biosensor", QoS = MqttQoS.AtLeastOnce },
                new MqttSubscription { TopicFilter = "saito/hub-3/commands/#", QoS = MqttQoS.AtLeastOnce },
            ],
        });
        var denied = version == MqttProtocolVersion.V500 ? MqttReasonCode.NotAuthorized : MqttReasonCode.UnspecifiedError;
        (await hub.ExpectAsync<SubAckPacket>()).ReasonCodes.ShouldBe([denied, denied, MqttReasonCode.GrantedQoS1]);

        await hub.SendAsync(new PublishPacket { Topic = "saito/hub-3/w/biosensor", Payload = Encoding.UTF8.GetBytes("{\"hr\":70}"), QoS = MqttQoS.AtLeastOnce, PacketId = 2 });
        (await hub.ExpectSkippingPublishesAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).ReasonCode.ShouldBe(MqttReasonCode.Success);

        await hub.SendAsync(new PublishPacket { Topic = "saito/hub-9/w/biosensor", Payload = Encoding.UTF8.GetBytes("{\"hr\":70}"), QoS = MqttQoS.AtLeastOnce, PacketId = 3 });
        if (version == MqttProtocolVersion.V500)
        {
            (await hub.ExpectAsync<PublishAckPacket>()).ReasonCode.ShouldBe(MqttReasonCode.NotAuthorized);
        }
        else
        {
            await hub.ExpectClosedAsync();
        }

        Saito.Broker.Metrics.DeniedTotal.ShouldBeGreaterThanOrEqualTo(3);
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task A_hub_cannot_leave_a_will_under_another_hub(MqttProtocolVersion version)
    {
        string secret = Cli("hubs", "add", "hub-4");
        var will = new MqttWill { Topic = "saito/hub-9/w/biosensor", Payload = Encoding.UTF8.GetBytes("{\"hr\":70}"), QoS = MqttQoS.AtLeastOnce, Retain = true };
        await using (var forger = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token))
        {
            await forger.SendAsync(new ConnectPacket
            {
                ProtocolVersion = version, ClientId = "hub-4-forger-" + version, UserName = "hub-4", Password = Encoding.UTF8.GetBytes(secret), Will = will,
            });
            forger.Version = version;
            // Refused at CONNECT: the will would be published for it later, past the ACL its own publishes meet.
            (await forger.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe(
                version == MqttProtocolVersion.V500 ? (byte)MqttReasonCode.NotAuthorized : (byte)MqttConnectReturnCode.NotAuthorized);
        }

        // A will under its own hub is fine.
        await using var hub = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token);
        will.Topic = "saito/hub-4/w/biosensor";
        await hub.SendAsync(new ConnectPacket
        {
            ProtocolVersion = version, ClientId = "hub-4-" + version, UserName = "hub-4", Password = Encoding.UTF8.GetBytes(secret), Will = will,
        });
        hub.Version = version;
        (await hub.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe((byte)0);
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task A_client_id_in_use_by_another_identity_is_refused_and_its_session_is_untouched(MqttProtocolVersion version)
    {
        // Sessions were found by client id alone: another hub taking the id got the session (Session Present, the
        // subscriptions and what was queued for it) and closed its owner's connection.
        string owner = Cli("hubs", "add", "hub-5");
        string other = Cli("hubs", "add", "hub-6");
        string clientId = "shared-id-" + version;
        var keep = version == MqttProtocolVersion.V500 ? new MqttProperties { SessionExpiryInterval = 300 } : null; // 5.0: the session outlives the connection
        await using (var first = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token))
        {
            await first.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = clientId, CleanStart = false, UserName = "hub-5", Password = Encoding.UTF8.GetBytes(owner), Properties = keep });
            first.Version = version;
            (await first.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe((byte)0);

            await using (var thief = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token))
            {
                await thief.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = clientId, CleanStart = false, UserName = "hub-6", Password = Encoding.UTF8.GetBytes(other) });
                thief.Version = version;
                var refused = await thief.ExpectAsync<ConnAckPacket>();
                refused.ReasonCode.ShouldBe(version == MqttProtocolVersion.V500 ? (byte)MqttReasonCode.NotAuthorized : (byte)MqttConnectReturnCode.NotAuthorized);
                refused.SessionPresent.ShouldBeFalse();
            }

            // The owner's connection is still open, and the owner may come back to its session.
            await first.SendAsync(new PingReqPacket());
            await first.ExpectAsync<PingRespPacket>();
        }

        await using var again = await RawMqttConnection.OpenAsync(Saito.Endpoint, Token);
        await again.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = clientId, CleanStart = false, UserName = "hub-5", Password = Encoding.UTF8.GetBytes(owner), Properties = keep });
        again.Version = version;
        var back = await again.ExpectAsync<ConnAckPacket>();
        back.ReasonCode.ShouldBe((byte)0);
        back.SessionPresent.ShouldBeTrue();
    }

    [Fact]
    public async Task An_address_with_too_many_failed_logins_is_refused_without_a_check_until_its_window_ends()
    {
        // Secrets are checked one at a time: a flood of wrong ones from a few addresses kept every other hub waiting.
        string secret = Cli("hubs", "add", "hub-7");
        await using var saito = await SaitoHost.StartAsync(
            ["Mqtt:AllowAnonymous=false", $"Security:CredentialsFile={CredentialsFile}", "Security:MaxFailedLoginsPerAddress=3", "Security:FailedLoginWindowSeconds=3600"]);
        for (int i = 0; i < 3; i++)
        {
            await using var wrong = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            await wrong.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = "hub-7-w" + i, UserName = "hub-7", Password = Encoding.UTF8.GetBytes("not-the-secret") });
            (await wrong.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe((byte)MqttReasonCode.BadUserNameOrPassword);
        }

        // The fourth attempt from this address is refused before its secret is looked at, even the right one.
        await using var right = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await right.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = "hub-7", UserName = "hub-7", Password = Encoding.UTF8.GetBytes(secret) });
        (await right.ExpectAsync<ConnAckPacket>()).ReasonCode.ShouldBe((byte)MqttReasonCode.NotAuthorized);
    }

    [Fact]
    public async Task The_dashboard_role_reads_every_hubs_readings_with_mosquitto_sub()
    {
        string hubSecret = Cli("hubs", "add", "hub-4");
        string dashSecret = Cli("clients", "add", "dash", "--role", "dashboard");
        var subscriber = new ProcessStartInfo(ExternalClientSettings.MosquittoSub)
        {
            RedirectStandardOutput = true,
            ArgumentList = { "-h", "127.0.0.1", "-p", Saito.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-u", "dash", "-P", dashSecret, "-t", "saito/#", "-q", "1", "-C", "1", "-v", "-W", "20" },
        };
        using var sub = Process.Start(subscriber)!;
        var line = sub.StandardOutput.ReadLineAsync(Token);
        await Eventually.TrueAsync(() => Saito.Broker.ConnectedClients >= 1, "the subscriber connected");

        // The subscription may land a moment after the CONNECT: publish until the subscriber prints the reading.
        var deadline = DateTime.UtcNow.AddSeconds(15);
        while (!line.IsCompleted && DateTime.UtcNow < deadline)
        {
            (await RunAsync(ExternalClientSettings.MosquittoPub, Pub("hub-4", hubSecret, "saito/hub-4/w/biosensor"))).ExitCode.ShouldBe(0);
            await Task.WhenAny(line.AsTask(), Task.Delay(200, Token));
        }

        (await line).ShouldBe("saito/hub-4/w/biosensor {\"hr\":72}");
        await sub.WaitForExitAsync(Token);
    }

    [Fact]
    public async Task A_client_with_no_role_cannot_subscribe_to_readings()
    {
        string secret = Cli("clients", "add", "viewer", "--role", "nothing-special");
        var result = await RunAsync(ExternalClientSettings.MosquittoSub,
            "-h", "127.0.0.1", "-p", Saito.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-u", "viewer", "-P", secret,
            "-t", "saito/#", "-V", "mqttv5", "-W", "5");
        result.Output.ShouldContain("denied");
    }

    [Fact]
    public void The_credentials_command_refuses_hash_iterations_below_the_servers_floor()
    {
        var output = new StringWriter();
        var error = new StringWriter();
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(
            [new("Security:CredentialsFile", CredentialsFile), new("Security:HashIterations", "5")]).Build();

        int rc = CredentialsCli.Run(["hubs", "add", "hub-weak"], configuration, output, error);

        rc.ShouldBe(2, output.ToString());
        error.ToString().ShouldContain("Security:HashIterations");
        output.ToString().ShouldNotContain("Secret", Case.Sensitive, "no secret was made with 5 iterations");
    }

    [Fact]
    public async Task A_configured_list_of_subscribe_roles_replaces_the_default_one()
    {
        // "dashboard" is in the default list; a configured list must be able to leave it out (the configuration binder
        // once added the configured roles to the default ones instead).
        string dashSecret = Cli("clients", "add", "dash-2", "--role", "dashboard");
        string analyticsSecret = Cli("clients", "add", "stats", "--role", "analytics");
        await using var other = await SaitoHost.StartAsync(
            ["Mqtt:AllowAnonymous=false", $"Security:CredentialsFile={CredentialsFile}", "Security:SubscribeRoles:0=analytics"]);
        string port = other.Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        long deniedBefore = other.Broker.Metrics.DeniedTotal;

        var dashboard = await RunAsync(ExternalClientSettings.MosquittoSub, "-h", "127.0.0.1", "-p", port, "-u", "dash-2", "-P", dashSecret,
            "-t", "saito/#", "-V", "mqttv5", "-W", "5");
        dashboard.Output.ShouldContain("denied", Case.Insensitive, "the dashboard role is not in the configured list");
        other.Broker.Metrics.DeniedTotal.ShouldBeGreaterThan(deniedBefore);

        // Granted, the subscriber waits for messages until -W ends it (exit code 27, "timed out"), and nothing was denied.
        long deniedAfterDashboard = other.Broker.Metrics.DeniedTotal;
        var analytics = await RunAsync(ExternalClientSettings.MosquittoSub, "-h", "127.0.0.1", "-p", port, "-u", "stats", "-P", analyticsSecret,
            "-t", "saito/#", "-V", "mqttv5", "-W", "2");
        analytics.Output.ShouldNotContain("denied", Case.Insensitive);
        analytics.ExitCode.ShouldBe(27, analytics.Output);
        other.Broker.Metrics.DeniedTotal.ShouldBe(deniedAfterDashboard);
    }

    [Fact]
    public async Task A_hub_certificate_from_the_configured_ca_signs_in_and_one_from_elsewhere_does_not()
    {
        Cli("hubs", "add", "hub-5");
        var genuine = ClientCertificate("hub-5", _hubCa, "hub-5");
        var rogue = ClientCertificate("hub-5", issuer: null, "rogue");
        string[] Tls((string Cert, string Key) c) =>
        [
            "-h", "127.0.0.1", "-p", Saito.TlsPort.ToString(System.Globalization.CultureInfo.InvariantCulture), "--cafile", TestCertificates.Instance.CaCertificatePath,
            "--cert", c.Cert, "--key", c.Key, "-q", "1", "-t", "saito/hub-5/w/biosensor", "-m", "{\"hr\":72}",
        ];

        var ok = await RunAsync(ExternalClientSettings.MosquittoPub, Tls(genuine));
        ok.ExitCode.ShouldBe(0, ok.Output);
        var refused = await RunAsync(ExternalClientSettings.MosquittoPub, Tls(rogue));
        refused.ExitCode.ShouldNotBe(0, "a certificate that does not chain to Mqtt:ClientCaPath fails the handshake");

        Cli("hubs", "disable", "hub-5");
        (await RunAsync(ExternalClientSettings.MosquittoPub, Tls(genuine))).ExitCode.ShouldNotBe(0, "a disabled hub's certificate no longer signs in");
    }

    [Fact]
    public void Saito_listening_on_the_network_with_anonymous_access_unset_refuses_to_start_naming_the_setting()
    {
        // Program.cs turns this exception into the message and exit code 2.
        var error = Should.Throw<OptionsValidationException>(() => SaitoApp.Build(
            ["--Mqtt:BindAddress=0.0.0.0", "--Mqtt:Port=18830", "--urls=http://127.0.0.1:0", $"--Storage:HotPath={_directory}/hot", $"--Storage:ArchivePath={_directory}/archive"]));
        string.Join(' ', error.Failures).ShouldContain("Mqtt:AllowAnonymous");
    }
}

using Microsoft.Extensions.Options;
using Saito.Ingestion.Hosting;
using Saito.Server;

namespace Saito.Ingestion.Tests.Settings;

/// <summary><c>Mqtt:External</c>: a user name and password never cross a network in clear unless a setting says it is meant.</summary>
public sealed class ExternalBrokerOptionsTests
{
    private static ValidateOptionsResult Validate(ExternalBrokerOptions options) => new ExternalBrokerOptionsValidator().Validate(null, options);

    [Theory]
    [InlineData("broker.school.lan", "saito", "secret")]
    [InlineData("broker.school.lan", "saito", null)]
    [InlineData("broker.school.lan", null, "secret")]
    [InlineData("10.0.0.7", "saito", "secret")]
    [InlineData("fe80::1", "saito", "secret")]
    [InlineData("localhost.evil.example", "saito", "secret")]
    public void Credentials_for_a_remote_broker_without_tls_are_refused_with_a_message_naming_the_setting_and_the_way_out(string host, string? user, string? password)
    {
        var result = Validate(new ExternalBrokerOptions { Host = host, UserName = user, Password = password });

        result.Failed.ShouldBeTrue();
        result.FailureMessage.ShouldContain("Mqtt:External:Tls");
        result.FailureMessage.ShouldContain("Mqtt:External:AllowCredentialsWithoutTls=true");
        result.FailureMessage.ShouldContain(host);
        if (password is not null)
        {
            result.FailureMessage.ShouldNotContain(password, customMessage: "the message never repeats the password");
        }
    }

    [Theory]
    [InlineData("localhost")]
    [InlineData("LOCALHOST")]
    [InlineData("127.0.0.1")]
    [InlineData("127.12.0.3")]
    [InlineData("::1")]
    [InlineData("[::1]")]
    public void Credentials_for_a_broker_on_this_machine_may_go_without_tls(string host)
    {
        Validate(new ExternalBrokerOptions { Host = host, UserName = "saito", Password = "secret" }).Succeeded.ShouldBeTrue();
    }

    [Fact]
    public void Credentials_for_a_remote_broker_are_accepted_with_tls_on()
    {
        Validate(new ExternalBrokerOptions { Host = "broker.school.lan", UserName = "saito", Password = "secret", Tls = true }).Succeeded.ShouldBeTrue();
    }

    [Fact]
    public void Credentials_for_a_remote_broker_without_tls_are_accepted_when_the_opt_out_is_set()
    {
        var options = new ExternalBrokerOptions { Host = "broker.school.lan", UserName = "saito", Password = "secret", AllowCredentialsWithoutTls = true };

        Validate(options).Succeeded.ShouldBeTrue();
        options.SendsCredentialsInClear.ShouldBeTrue("Saito still warns about it at start");
    }

    [Fact]
    public void A_remote_broker_without_credentials_needs_no_tls()
    {
        Validate(new ExternalBrokerOptions { Host = "broker.school.lan" }).Succeeded.ShouldBeTrue();
    }

    [Theory]
    [InlineData("KeepAliveSeconds")]
    [InlineData("SessionExpirySeconds")]
    [InlineData("Password")]
    public void Settings_the_mqtt_client_cannot_send_are_refused(string setting)
    {
        var options = setting switch
        {
            "KeepAliveSeconds" => new ExternalBrokerOptions { KeepAliveSeconds = 65536 },
            "SessionExpirySeconds" => new ExternalBrokerOptions { SessionExpirySeconds = -1 },
            _ => new ExternalBrokerOptions { ProtocolVersion = "3.1.1", Password = "secret" },
        };

        var result = Validate(options);

        result.Succeeded.ShouldBeFalse();
        (result.FailureMessage ?? "").ShouldContain($"Mqtt:External:{setting}");
    }

    [Fact]
    public void Tls_and_the_opt_out_are_off_unless_set()
    {
        var options = new ExternalBrokerOptions();

        options.Tls.ShouldBeFalse();
        options.AllowCredentialsWithoutTls.ShouldBeFalse();
    }

    [Fact]
    public async Task Saito_refuses_to_start_when_its_credentials_would_cross_the_network_in_clear()
    {
        await using var storage = new SqliteTestStorage();
        string[] args =
        [
            $"--urls=http://127.0.0.1:{FreePort.Next()}",
            .. storage.Settings.Select(s => "--" + s),
            "--Mqtt:Mode=external",
            "--Mqtt:External:Host=broker.school.lan",
            "--Mqtt:External:UserName=saito",
            "--Mqtt:External:Password=secret",
        ];

        var ex = await Should.ThrowAsync<OptionsValidationException>(async () =>
        {
            await using var app = SaitoApp.Build(args);
            await app.StartAsync(TestContext.Current.CancellationToken);
        });

        ex.Message.ShouldContain("Mqtt:External:Tls");
        ex.Message.ShouldContain("Mqtt:External:AllowCredentialsWithoutTls");
    }
}

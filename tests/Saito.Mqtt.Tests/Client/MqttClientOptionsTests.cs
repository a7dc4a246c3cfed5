using Microsoft.Extensions.Options;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Client;

public sealed class MqttClientOptionsTests
{
    [Fact]
    public void Defaults_are_valid()
    {
        new MqttClientOptions().Validate().ShouldBeEmpty();
    }

    [Fact]
    public void Every_problem_is_reported_at_once()
    {
        var options = new MqttClientOptions
        {
            Host = "",
            Port = 0,
            ProtocolVersion = MqttProtocolVersion.V311,
            ClientId = "",
            CleanStart = false,
            SessionExpiry = TimeSpan.FromMinutes(1),
            KeepAlive = TimeSpan.FromMilliseconds(500),
            Password = "p",
            ReceiveMaximum = 0,
            MaxPacketSize = 10,
            ConnectTimeout = TimeSpan.Zero,
            Reconnect = new MqttReconnectOptions { InitialDelay = TimeSpan.FromSeconds(5), MaxDelay = TimeSpan.FromSeconds(1), Jitter = 2 },
            Will = new MqttWill { Topic = "a/#" },
        };

        var errors = options.Validate();

        errors.Count.ShouldBe(12, string.Join('\n', errors));
    }

    [Fact]
    public void Tls_files_must_exist_and_the_ca_file_excludes_a_custom_callback()
    {
        var options = new MqttClientOptions
        {
            Tls = new MqttClientTlsOptions
            {
                Enabled = true,
                CaCertificatePath = "/nonexistent/ca.crt",
                ServerCertificateValidation = (_, _, _, errors) => errors == System.Net.Security.SslPolicyErrors.None,
                ClientKeyPath = "/nonexistent/key.pem",
            },
        };

        var errors = options.Validate();

        errors.ShouldContain(e => e.Contains("CaCertificatePath", StringComparison.Ordinal) && e.Contains("does not exist", StringComparison.Ordinal));
        errors.ShouldContain(e => e.Contains("not both", StringComparison.Ordinal));
        errors.ShouldContain(e => e.Contains("ClientKeyPath needs", StringComparison.Ordinal));
    }

    [Fact]
    public void Client_refuses_invalid_options_when_created()
    {
        var exception = Should.Throw<OptionsValidationException>(() => new MqttClient(new MqttClientOptions { Port = 70000 }));

        exception.Failures.ShouldHaveSingleItem().ShouldContain("70000");
    }

    [Fact]
    public void Validator_plugs_into_the_options_pipeline()
    {
        var result = new MqttClientOptionsValidator().Validate(null, new MqttClientOptions { ReceiveMaximum = 70000 });

        result.Failed.ShouldBeTrue();
        result.FailureMessage.ShouldContain("ReceiveMaximum");
    }

    [Theory]
    [InlineData("sensors/#")]
    [InlineData("sensors/+/temperature")]
    [InlineData("+")]
    [InlineData("#")]
    [InlineData("$share/ingest/sensors/#")]
    public void Valid_topic_filters_pass(string filter)
    {
        Should.NotThrow(() => MqttClient.ValidateTopicFilter(filter));
    }

    [Theory]
    [InlineData("sensors/#/x")]
    [InlineData("sensors/temp#")]
    [InlineData("sensors/te+mp")]
    [InlineData("$share//sensors")]
    [InlineData("$share/group")]
    [InlineData("$share/gr+oup/x")]
    [InlineData("$share/group/")]
    public void Invalid_topic_filters_are_refused_before_anything_is_sent(string filter)
    {
        Should.Throw<ArgumentException>(() => MqttClient.ValidateTopicFilter(filter));
    }
}

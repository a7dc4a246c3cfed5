using System.Diagnostics;
using System.Text;
using Microsoft.Extensions.Configuration;
using Saito.Mqtt.Packets;
using Saito.Server.Security;

namespace Saito.Server.Tests.Security;

/// <summary>
/// Issue 32, item 11: a CONNECT with an unknown hub name was answered 0x05 (not authorized) at once, a known name with a
/// wrong secret 0x04 after a PBKDF2 check, so the answer and its time told which hub names exist.
/// </summary>
public sealed class HubNameSecrecyTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task An_unknown_hub_name_and_a_wrong_secret_get_the_same_code_after_the_same_hash_work(MqttProtocolVersion version)
    {
        string directory = Directory.CreateTempSubdirectory("saito-names-").FullName;
        string credentials = Path.Combine(directory, "credentials.json");
        var configuration = new ConfigurationBuilder().AddInMemoryCollection([new("Security:CredentialsFile", credentials), new("Security:HashIterations", "200000")]).Build();
        CredentialsCli.Run(["hubs", "add", "hub-1"], configuration, new StringWriter(), new StringWriter()).ShouldBe(0);
        await using var saito = await SaitoHost.StartAsync(
            ["Mqtt:AllowAnonymous=false", $"Security:CredentialsFile={credentials}", "Security:HashIterations=200000", "Security:MaxFailedLoginsPerAddress=1000"]);

        var wrong = await ConnectManyAsync(saito, version, "hub-1");
        var unknown = await ConnectManyAsync(saito, version, "hub-404");

        byte expected = version == MqttProtocolVersion.V500 ? (byte)MqttReasonCode.BadUserNameOrPassword : (byte)MqttConnectReturnCode.BadUserNameOrPassword;
        wrong.Codes.ShouldAllBe(c => c == expected);
        unknown.Codes.ShouldAllBe(c => c == expected);
        // 200,000 PBKDF2 iterations take tens of ms; an unknown name was answered without any.
        // A generous bound (a shared machine is noisy): without the dummy hash the ratio was about 1 to 50.
        unknown.Median.ShouldBeGreaterThan(wrong.Median * 0.25, $"unknown {unknown.Median} ms, wrong secret {wrong.Median} ms");
    }

    private static async Task<(List<byte> Codes, double Median)> ConnectManyAsync(SaitoHost saito, MqttProtocolVersion version, string name)
    {
        var codes = new List<byte>();
        var times = new List<double>();
        for (int i = 0; i < 5; i++)
        {
            await using var client = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            client.Version = version;
            var watch = Stopwatch.StartNew();
            await client.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = $"{name}-{i}", UserName = name, Password = Encoding.UTF8.GetBytes("not-the-secret") });
            var ack = await client.ExpectAsync<ConnAckPacket>();
            times.Add(watch.Elapsed.TotalMilliseconds);
            codes.Add(ack.ReasonCode);
        }

        times.Sort();
        return (codes, times[times.Count / 2]);
    }
}

using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

public sealed class AuthenticationTests
{
    [Theory]
    [InlineData(MqttProtocolVersion.V311, "teacher", "right", (byte)0)]
    [InlineData(MqttProtocolVersion.V311, "teacher", "wrong", (byte)MqttConnectReturnCode.BadUserNameOrPassword)]
    [InlineData(MqttProtocolVersion.V311, "visitor", "any", (byte)MqttConnectReturnCode.NotAuthorized)]
    [InlineData(MqttProtocolVersion.V311, null, null, (byte)MqttConnectReturnCode.NotAuthorized)]
    [InlineData(MqttProtocolVersion.V500, "teacher", "right", (byte)0)]
    [InlineData(MqttProtocolVersion.V500, "teacher", "wrong", (byte)MqttReasonCode.BadUserNameOrPassword)]
    [InlineData(MqttProtocolVersion.V500, "visitor", "any", (byte)MqttReasonCode.NotAuthorized)]
    [InlineData(MqttProtocolVersion.V500, null, null, (byte)MqttReasonCode.NotAuthorized)]
    public async Task The_authenticator_decides_and_its_answer_is_the_connack_code(MqttProtocolVersion version, string? user, string? password, byte expected)
    {
        var authenticator = new TeacherOnly();
        await using var saito = await SaitoHost.StartAsync(["Mqtt:AllowAnonymous=false"],
            b => b.Services.AddSingleton<IMqttAuthenticator>(authenticator));
        await using var connection = await RawMqttConnection.OpenAsync(saito.Endpoint, TestContext.Current.CancellationToken);
        await connection.SendAsync(new ConnectPacket
        {
            ProtocolVersion = version,
            ClientId = "auth-" + Guid.NewGuid().ToString("N")[..8],
            UserName = user,
            Password = password is null ? (ReadOnlyMemory<byte>?)null : Encoding.UTF8.GetBytes(password),
        });
        connection.Version = version;

        var connAck = await connection.ExpectAsync<ConnAckPacket>();
        connAck.ReasonCode.ShouldBe(expected);
        if (expected != 0)
        {
            await connection.ExpectClosedAsync();
            saito.Broker.ConnectedClients.ShouldBe(0, "a refused client holds no connection slot");
        }

        if (user is not null)
        {
            authenticator.Seen.ShouldContain(user, "credentials go to the authenticator");
        }
    }

    [Fact]
    public async Task Anonymous_clients_are_accepted_by_default_while_every_listener_is_on_loopback()
    {
        await using var saito = await SaitoHost.StartAsync();
        await using var connection = await RawMqttConnection.OpenAsync(saito.Endpoint, TestContext.Current.CancellationToken);
        (await connection.ConnectAsync(MqttProtocolVersion.V500, "anon-" + Guid.NewGuid().ToString("N")[..8])).ReasonCode.ShouldBe((byte)0);
    }

    private sealed class TeacherOnly : IMqttAuthenticator
    {
        public List<string> Seen { get; } = [];

        public ValueTask<MqttAuthenticationOutcome> AuthenticateAsync(MqttAuthenticationContext context, CancellationToken cancellationToken)
        {
            lock (Seen)
            {
                Seen.Add(context.UserName ?? "");
            }

            string password = context.Password is { } p ? Encoding.UTF8.GetString(p.Span) : "";
            return ValueTask.FromResult(context.UserName switch
            {
                "teacher" when password == "right" => MqttAuthenticationOutcome.Accepted(new MqttClientIdentity("teacher", [])),
                "teacher" => MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.BadUserNameOrPassword),
                _ => MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.NotAuthorized),
            });
        }
    }
}

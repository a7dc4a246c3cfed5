namespace Saito.Ingestion.Tests.Pipeline;

/// <summary>
/// <c>Ingestion:DeviceHubRecheckSeconds</c>, checked at start (its effect, one reread per device however many forged
/// messages: Saito.Server.Tests' HubSiteTests).
/// </summary>
public sealed class DeviceHubRecheckSettingTests
{
    [Theory]
    [InlineData(0, false)]
    [InlineData(1, true)]
    [InlineData(30, true)]
    [InlineData(86_400, true)]
    [InlineData(86_401, false)]
    public void The_setting_is_checked_at_start(int value, bool valid)
    {
        var result = new IngestionOptionsValidator().Validate(null, new IngestionOptions { DeviceHubRecheckSeconds = value });

        result.Succeeded.ShouldBe(valid);
        if (!valid)
        {
            result.FailureMessage!.ShouldContain("Ingestion:DeviceHubRecheckSeconds");
        }
    }
}

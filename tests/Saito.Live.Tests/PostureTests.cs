namespace Saito.Live.Tests;

public sealed class PostureTests
{
    [Fact]
    public void Unknown_is_the_default()
    {
        default(Posture).ShouldBe(Posture.Unknown);
    }
}

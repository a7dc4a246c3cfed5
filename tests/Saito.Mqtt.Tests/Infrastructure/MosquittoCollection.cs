namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>One Mosquitto (<see cref="MosquittoFixture"/>) shared by every test in the "mosquitto" collection.</summary>
[CollectionDefinition(Name)]
public sealed class MosquittoCollection : ICollectionFixture<MosquittoFixture>
{
    public const string Name = "mosquitto";
}

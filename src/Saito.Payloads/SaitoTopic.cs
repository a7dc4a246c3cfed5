using Saito.Readings;

namespace Saito.Payloads;

/// <summary>The last level of a Saito topic: which kind of reading the payload holds, a device's hello, or a check-in.</summary>
public enum TopicKind
{
    Biosensor,
    Location,
    Pressure,
    Hello,

    /// <summary>A fingerprint reader's check-in (or check-out) of an enrolled owner (<see cref="CheckInParser"/>).</summary>
    CheckIn,
}

/// <summary>A parsed <c>{prefix}/{hub}/{device}/{kind}</c> topic (see docs/protocol.md).</summary>
/// <param name="Hub">The hub that published the message (second level).</param>
/// <param name="Device">The device's serial as the hub names it (third level); the pipeline maps it to a device id.</param>
/// <param name="Kind">The last level.</param>
public readonly record struct SaitoTopic(string Hub, string Device, TopicKind Kind)
{
    /// <summary>The kind of reading the topic carries, or null for <see cref="TopicKind.Hello"/> and <see cref="TopicKind.CheckIn"/>.</summary>
    public ReadingKind? ReadingKind => Kind switch
    {
        TopicKind.Biosensor => Readings.ReadingKind.Biosensor,
        TopicKind.Location => Readings.ReadingKind.Location,
        TopicKind.Pressure => Readings.ReadingKind.Pressure,
        _ => null,
    };
}

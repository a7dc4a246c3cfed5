namespace Saito.Readings;

/// <summary>
/// The <c>reason</c> column of the dead_letter table: short, stable codes, each documented with an example in
/// docs/protocol.md (a test checks that every code here appears there). Never rename one: dashboards and
/// queries count them.
/// </summary>
public static class DeadLetterReasons
{
    /// <summary>The topic is not <c>{prefix}/{hub}/{device}/{kind}</c>.</summary>
    public const string BadTopic = "bad-topic";

    /// <summary>The payload is larger than <c>Ingestion:MaxPayloadBytes</c>; it is not parsed.</summary>
    public const string PayloadTooLarge = "payload-too-large";

    /// <summary>The payload is empty, blank, an empty array, or a SenML pack without a single record that has a value.</summary>
    public const string Empty = "empty";

    /// <summary>The payload is not JSON (or not valid JSON to the end); nothing in it is taken.</summary>
    public const string MalformedJson = "malformed-json";

    /// <summary>Valid JSON but not a SenML pack Saito can use: not an array, a bad base field, a bad name, an unsupported version, an unknown must-understand field.</summary>
    public const string MalformedSenML = "malformed-senml";

    /// <summary>A value of the wrong JSON type: a string for hr, an element that is not an object, a SenML string value.</summary>
    public const string WrongType = "wrong-type";

    /// <summary>A required field is absent: ts, a location without x, y and z, a biosensor reading without a value.</summary>
    public const string MissingField = "missing-field";

    /// <summary>The same field given twice in one reading (a repeated JSON key, or two SenML records for one field, channel and time).</summary>
    public const string DuplicateField = "duplicate-field";

    /// <summary>A value that belongs to another kind than the topic's (kpa on a biosensor topic).</summary>
    public const string WrongKind = "wrong-kind";

    /// <summary>A number too large for a double (<c>1e999</c>): JSON has no NaN or Infinity, but overflow gives one.</summary>
    public const string NotFinite = "not-finite";

    /// <summary>A value outside <see cref="ReadingLimits"/>, or a diastolic pressure not below the systolic.</summary>
    public const string OutOfRange = "out-of-range";

    /// <summary>A timestamp that cannot be read: not ISO 8601, no time zone, an impossible date.</summary>
    public const string BadTimestamp = "bad-timestamp";

    /// <summary>A timestamp more than <c>Ingestion:MaxFutureSkewSeconds</c> ahead of the time Saito received it.</summary>
    public const string TimestampFuture = "timestamp-future";

    /// <summary>A timestamp more than <c>Ingestion:MaxAgeDays</c> before the time Saito received it.</summary>
    public const string TimestampPast = "timestamp-past";

    /// <summary>A channel that is not an integer from 0 to 65535.</summary>
    public const string BadChannel = "bad-channel";

    /// <summary>A SenML name whose last segment is not a field Saito knows (hr, sys, dia, temp, x, y, z, p, kpa).</summary>
    public const string UnknownName = "unknown-name";

    /// <summary>A SenML unit that does not fit the field (%RH for temp).</summary>
    public const string UnitMismatch = "unit-mismatch";

    /// <summary>More readings than <c>Ingestion:MaxReadingsPerMessage</c>: the first ones are kept, the rest are one dead letter.</summary>
    public const string TooManyReadings = "too-many-readings";

    /// <summary>
    /// More rejections in one message than <c>Ingestion:MaxDeadLettersPerMessage</c>: the first are dead letters one by
    /// one, the rest one summary dead letter (their count, the most common reasons, the whole message as payload).
    /// </summary>
    public const string TooManyRejections = "too-many-rejections";

    /// <summary>
    /// A message (readings or hello) from a device Saito does not know, on a hub that registered
    /// <c>Ingestion:MaxNewDevicesPerHubPerHour</c> new devices in the last hour: the device is not registered.
    /// </summary>
    public const string TooManyNewDevices = "too-many-new-devices";

    /// <summary>
    /// A message (readings, hello or check-in) for a device bound to a hub of another site (<c>saito hubs add … --site</c>):
    /// nothing of it is stored; the device stays bound to its hub.
    /// </summary>
    public const string DeviceOfAnotherSite = "device-of-another-site";

    /// <summary>
    /// A reading whose key (device, channel, time) is stored already with a different value for one of its fields: the
    /// stored value is kept, and the reading is kept here (as Saito JSON). Values the stored reading lacked are added to it.
    /// </summary>
    public const string ConflictingReading = "conflicting-reading";

    /// <summary>A hello payload that cannot be read.</summary>
    public const string BadHello = "bad-hello";

    /// <summary>A check-in payload that cannot be read (not JSON, no owner, a time outside the window).</summary>
    public const string BadCheckIn = "bad-check-in";

    /// <summary>A check-in for an owner id the registry does not have (or one no longer active).</summary>
    public const string UnknownOwner = "unknown-owner";

    /// <summary>
    /// A check-out of an owner with no open check-in that school day before its time: no arrival recorded, already
    /// checked out at another time, or the arrival is later (readers with different clocks, messages out of order).
    /// </summary>
    public const string NotCheckedIn = "not-checked-in";

    /// <summary>A check-in arrived while the registry was unavailable (its database migration failed): the message is kept here.</summary>
    public const string RegistryUnavailable = "registry-unavailable";

    /// <summary>Every code above, in the order docs/protocol.md lists them.</summary>
    public static IReadOnlyList<string> All { get; } =
    [
        BadTopic, PayloadTooLarge, Empty, MalformedJson, MalformedSenML, WrongType, MissingField, DuplicateField,
        WrongKind, NotFinite, OutOfRange, BadTimestamp, TimestampFuture, TimestampPast, BadChannel, UnknownName,
        UnitMismatch, TooManyReadings, TooManyRejections, TooManyNewDevices, DeviceOfAnotherSite, ConflictingReading, BadHello, BadCheckIn, UnknownOwner,
        NotCheckedIn, RegistryUnavailable,
    ];
}

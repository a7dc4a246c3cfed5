namespace Saito.Registry.Model;

/// <summary>What a device is, as staff know it (derived from the assignments and <see cref="Device.RetiredAt"/>, never stored).</summary>
public enum DeviceStatus
{
    /// <summary>Seen by ingestion (or added by hand) and not assigned to anyone.</summary>
    New,

    /// <summary>Has an open assignment.</summary>
    Assigned,

    /// <summary>Taken out of use; its history stays.</summary>
    Retired,
}

/// <summary>
/// A device: the <c>device</c> table that ingestion registers serials in on first sight (Saito.Storage creates and
/// owns it, so bulk loads and the load tool work without the registry; EF Core maps it and leaves it out of its
/// migrations). Kind, channels and firmware come from the device's hello or from staff.
/// </summary>
public sealed class Device
{
    public int Id { get; set; }

    public required string Serial { get; set; }

    /// <summary>wristband, location-garment, pressure-mat, foot-mat, tablet, phone, fingerprint-reader, hub, or what a hello said.</summary>
    public string? Kind { get; set; }

    public int? Channels { get; set; }

    public string? Firmware { get; set; }

    public string? Hub { get; set; }

    public DateTimeOffset FirstSeen { get; set; }

    public DateTimeOffset? LastHello { get; set; }

    /// <summary>When a reading from it last arrived (ingestion writes it every few seconds, not per reading).</summary>
    public DateTimeOffset? LastSeen { get; set; }

    public DateTimeOffset? RetiredAt { get; set; }

    public List<Assignment> Assignments { get; } = [];
}

/// <summary>What staff may call a device (a hello may also say biosensor, location or pressure).</summary>
public static class DeviceKinds
{
    public static IReadOnlyList<string> All { get; } =
        ["wristband", "location-garment", "pressure-mat", "foot-mat", "tablet", "phone", "fingerprint-reader", "hub"];
}

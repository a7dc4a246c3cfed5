namespace Saito.Registry.Model;

/// <summary>
/// A device worn or held by an owner from <see cref="From"/> until <see cref="To"/> (open while null). A device has
/// at most one open assignment; reassigning closes the open one, so every reading resolves to who had the device at
/// the moment it was taken.
/// </summary>
public sealed class Assignment
{
    public int Id { get; set; }

    public int DeviceId { get; set; }

    public Device? Device { get; set; }

    public int OwnerId { get; set; }

    public Owner? Owner { get; set; }

    public DateTimeOffset From { get; set; }

    public DateTimeOffset? To { get; set; }

    /// <summary>The staff member who made it (user name), or <c>system</c>.</summary>
    public required string AssignedBy { get; set; }

    public string? Note { get; set; }
}

namespace Saito.Registry.Model;

/// <summary>What an owner is in the classroom.</summary>
public enum OwnerKind
{
    Student,
    Aide,
    Staff,
}

/// <summary>
/// A person devices are assigned to: a student, an aide or a member of staff. Only what the classroom needs is
/// kept: a display name, the school's own reference (a student number), and whether the person is still here.
/// </summary>
public sealed class Owner : IVersioned
{
    public int Id { get; set; }

    public OwnerKind Kind { get; set; }

    public required string DisplayName { get; set; }

    /// <summary>The school's own identifier (a student number), unique when set.</summary>
    public string? ExternalRef { get; set; }

    /// <summary>False once the person has left; kept for the history of assignments and readings.</summary>
    public bool Active { get; set; } = true;

    public DateTimeOffset CreatedAt { get; set; }

    public DateTimeOffset UpdatedAt { get; set; }

    public int Version { get; set; }

    public List<Contact> Contacts { get; } = [];
}

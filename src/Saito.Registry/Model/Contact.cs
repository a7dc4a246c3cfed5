namespace Saito.Registry.Model;

/// <summary>Who a contact is to the student.</summary>
public enum ContactRelationship
{
    Parent,
    Guardian,
    School,
    Other,
}

/// <summary>A designated contact of a student (parent, school, third party) and which notices they want.</summary>
public sealed class Contact : IVersioned
{
    public int Id { get; set; }

    public int OwnerId { get; set; }

    public Owner? Owner { get; set; }

    public required string Name { get; set; }

    public required string Email { get; set; }

    public ContactRelationship Relationship { get; set; }

    /// <summary>An email when the student is checked in.</summary>
    public bool NotifyArrival { get; set; } = true;

    /// <summary>An email when a session has started and the student has not arrived after the grace period.</summary>
    public bool NotifyAbsence { get; set; } = true;

    /// <summary>The language of this contact's emails (<c>en</c>, <c>fr</c>...); unset means <c>School:Language</c>.</summary>
    public string? Language { get; set; }

    public DateTimeOffset CreatedAt { get; set; }

    public DateTimeOffset UpdatedAt { get; set; }

    public int Version { get; set; }
}

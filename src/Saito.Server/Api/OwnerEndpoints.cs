using System.ComponentModel.DataAnnotations;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;

namespace Saito.Server.Api;

public sealed record OwnerView(int Id, OwnerKind Kind, string DisplayName, string? ExternalRef, bool Active, DateTimeOffset CreatedAt, DateTimeOffset UpdatedAt, int Version)
{
    public static OwnerView Of(Owner o) => new(o.Id, o.Kind, o.DisplayName, o.ExternalRef, o.Active, o.CreatedAt, o.UpdatedAt, o.Version);
}

public sealed record OwnerRequest(
    [property: Required] OwnerKind? Kind,
    [property: Required, StringLength(RegistryDbContext.NameLength, MinimumLength = 1)] string DisplayName,
    [property: StringLength(RegistryDbContext.ExternalRefLength, MinimumLength = 1)] string? ExternalRef,
    bool? Active);

public sealed class OwnerQuery
{
    /// <summary><c>student</c>, <c>aide</c> or <c>staff</c>.</summary>
    [StringLength(16)]
    public string? Kind { get; set; }

    public bool? Active { get; set; }

    /// <summary>Part of the display name or the external reference.</summary>
    [StringLength(100)]
    public string? Q { get; set; }
}

public sealed record ContactView(int Id, int OwnerId, string Name, string Email, ContactRelationship Relationship, bool NotifyArrival, bool NotifyAbsence, string? Language, int Version)
{
    public static ContactView Of(Contact c) => new(c.Id, c.OwnerId, c.Name, c.Email, c.Relationship, c.NotifyArrival, c.NotifyAbsence, c.Language, c.Version);
}

public sealed record ContactRequest(
    [property: Required, StringLength(RegistryDbContext.NameLength, MinimumLength = 1)] string Name,
    [property: Required, EmailAddress, StringLength(RegistryDbContext.EmailLength)] string Email,
    [property: Required] ContactRelationship? Relationship,
    bool? NotifyArrival,
    bool? NotifyAbsence,
    [property: RegularExpression("^(en|fr)$", ErrorMessage = "language must be en or fr")] string? Language);

/// <summary>Owners (students, aides, staff) and the contacts of students.</summary>
internal static class OwnerEndpoints
{
    public static void MapOwnerEndpoints(this RouteGroupBuilder api)
    {
        var owners = api.MapGroup("/owners").WithTags("Owners");
        owners.MapGet("/", ListAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("Owners, by name; filter by kind, active, q");
        owners.MapGet("/{id:int}", GetAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("One owner, with its ETag");
        owners.MapPost("/", CreateAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Add an owner");
        owners.MapPut("/{id:int}", UpdateAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Change an owner (If-Match required)");
        owners.MapDelete("/{id:int}", DeleteAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Delete an owner with no history (else set active false)");
        owners.MapGet("/{id:int}/contacts", ListContactsAsync).RequireAuthorization(ApiPolicies.ReadContacts).WithSummary("A student's contacts");
        owners.MapPost("/{id:int}/contacts", AddContactAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Add a contact to a student");

        var contacts = api.MapGroup("/contacts").WithTags("Owners");
        contacts.MapGet("/{id:int}", GetContactAsync).RequireAuthorization(ApiPolicies.ReadContacts).WithSummary("One contact, with its ETag");
        contacts.MapPut("/{id:int}", UpdateContactAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Change a contact (If-Match required)");
        contacts.MapDelete("/{id:int}", DeleteContactAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Remove a contact");
    }

    private static async Task<IResult> ListAsync([AsParameters] OwnerQuery query, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var (ownerKind, error) = ApiEnums.Parse<OwnerKind>(query.Kind, "kind");
        if (error is not null)
        {
            return error;
        }

        var owners = db.Owners.AsNoTracking();
        if (ownerKind is { } kind)
        {
            owners = owners.Where(o => o.Kind == kind);
        }

        if (query.Active is { } active)
        {
            owners = owners.Where(o => o.Active == active);
        }

        if (!string.IsNullOrWhiteSpace(query.Q))
        {
            string q = query.Q.Trim().ToLowerInvariant();
#pragma warning disable CA1304, CA1311, CA1862 // EF Core translates ToLower() to SQL LOWER() on every engine; the culture overloads do not translate.
            owners = owners.Where(o => o.DisplayName.ToLower().Contains(q) || (o.ExternalRef != null && o.ExternalRef.ToLower().Contains(q)));
#pragma warning restore CA1304, CA1311, CA1862
        }

        return TypedResults.Ok(await owners.OrderBy(o => o.DisplayName).ThenBy(o => o.Id).PageAsync(page, OwnerView.Of, cancellationToken));
    }

    private static async Task<IResult> GetAsync(int id, HttpContext http, RegistryDbContext db, CancellationToken cancellationToken) =>
        await db.Owners.AsNoTracking().SingleOrDefaultAsync(o => o.Id == id, cancellationToken) is { } owner
            ? Versions.WithETag(http, owner, OwnerView.Of(owner))
            : Problems.NotFound("owner", id);

    private static async Task<IResult> CreateAsync(OwnerRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (request.ExternalRef is { } reference && await db.Owners.AnyAsync(o => o.ExternalRef == reference, cancellationToken))
        {
            return Problems.Conflict($"An owner with external reference {reference} exists already.");
        }

        var now = time.GetUtcNow();
        var owner = new Owner
        {
            Kind = request.Kind!.Value,
            DisplayName = request.DisplayName.Trim(),
            ExternalRef = request.ExternalRef,
            Active = request.Active ?? true,
            CreatedAt = now,
            UpdatedAt = now,
            Version = 1,
        };
        return await Versions.CreatedAsync(http, db, owner, OwnerView.Of, created => $"/api/owners/{created.Id}", cancellationToken);
    }

    private static async Task<IResult> UpdateAsync(int id, OwnerRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == id, cancellationToken) is not { } owner)
        {
            return Problems.NotFound("owner", id);
        }

        if (Versions.CheckAndBump(http, owner) is { } refused)
        {
            return refused;
        }

        if (request.ExternalRef is { } reference && await db.Owners.AnyAsync(o => o.ExternalRef == reference && o.Id != id, cancellationToken))
        {
            return Problems.Conflict($"Another owner has external reference {reference}.");
        }

        owner.Kind = request.Kind!.Value;
        owner.DisplayName = request.DisplayName.Trim();
        owner.ExternalRef = request.ExternalRef;
        owner.Active = request.Active ?? owner.Active;
        owner.UpdatedAt = time.GetUtcNow();
        return await Versions.SaveAsync(db, owner, cancellationToken) ?? Versions.WithETag(http, owner, OwnerView.Of(owner));
    }

    private static async Task<IResult> DeleteAsync(int id, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == id, cancellationToken) is not { } owner)
        {
            return Problems.NotFound("owner", id);
        }

        if (await db.Assignments.AnyAsync(a => a.OwnerId == id, cancellationToken) || await db.CheckIns.AnyAsync(c => c.OwnerId == id, cancellationToken)
            || await db.RosterEntries.AnyAsync(r => r.OwnerId == id, cancellationToken) || await db.Notices.AnyAsync(n => n.OwnerId == id, cancellationToken))
        {
            return Problems.Conflict($"Owner {id} has assignments, check-ins, roster places or notices: their history stays. Set active to false instead.");
        }

        db.Owners.Remove(owner);
        await db.SaveChangesAsync(cancellationToken);
        return TypedResults.NoContent();
    }

    private static async Task<IResult> ListContactsAsync(int id, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (!await db.Owners.AnyAsync(o => o.Id == id, cancellationToken))
        {
            return Problems.NotFound("owner", id);
        }

        return TypedResults.Ok(await db.Contacts.AsNoTracking().Where(c => c.OwnerId == id).OrderBy(c => c.Id).PageAsync(page, ContactView.Of, cancellationToken));
    }

    private static async Task<IResult> AddContactAsync(int id, ContactRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == id, cancellationToken) is not { } owner)
        {
            return Problems.NotFound("owner", id);
        }

        if (owner.Kind != OwnerKind.Student)
        {
            return Problems.Conflict($"Owner {id} is {owner.Kind.ToString().ToLowerInvariant()}: contacts are for students.");
        }

        var now = time.GetUtcNow();
        var contact = new Contact
        {
            OwnerId = id,
            Name = request.Name.Trim(),
            Email = request.Email.Trim(),
            Relationship = request.Relationship!.Value,
            NotifyArrival = request.NotifyArrival ?? true,
            NotifyAbsence = request.NotifyAbsence ?? true,
            Language = request.Language,
            CreatedAt = now,
            UpdatedAt = now,
            Version = 1,
        };
        return await Versions.CreatedAsync(http, db, contact, ContactView.Of, created => $"/api/contacts/{created.Id}", cancellationToken);
    }

    private static async Task<IResult> GetContactAsync(int id, HttpContext http, RegistryDbContext db, CancellationToken cancellationToken) =>
        await db.Contacts.AsNoTracking().SingleOrDefaultAsync(c => c.Id == id, cancellationToken) is { } contact
            ? Versions.WithETag(http, contact, ContactView.Of(contact))
            : Problems.NotFound("contact", id);

    private static async Task<IResult> UpdateContactAsync(int id, ContactRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Contacts.SingleOrDefaultAsync(c => c.Id == id, cancellationToken) is not { } contact)
        {
            return Problems.NotFound("contact", id);
        }

        if (Versions.CheckAndBump(http, contact) is { } refused)
        {
            return refused;
        }

        contact.Name = request.Name.Trim();
        contact.Email = request.Email.Trim();
        contact.Relationship = request.Relationship!.Value;
        contact.NotifyArrival = request.NotifyArrival ?? contact.NotifyArrival;
        contact.NotifyAbsence = request.NotifyAbsence ?? contact.NotifyAbsence;
        contact.Language = request.Language;
        contact.UpdatedAt = time.GetUtcNow();
        return await Versions.SaveAsync(db, contact, cancellationToken) ?? Versions.WithETag(http, contact, ContactView.Of(contact));
    }

    private static async Task<IResult> DeleteContactAsync(int id, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (await db.Contacts.SingleOrDefaultAsync(c => c.Id == id, cancellationToken) is not { } contact)
        {
            return Problems.NotFound("contact", id);
        }

        db.Contacts.Remove(contact);
        await db.SaveChangesAsync(cancellationToken);
        return TypedResults.NoContent();
    }
}

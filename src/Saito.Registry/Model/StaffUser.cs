using Microsoft.AspNetCore.Identity;

namespace Saito.Registry.Model;

/// <summary>A member of staff who signs in (ASP.NET Core Identity). Roles: <see cref="StaffRoles"/>.</summary>
public sealed class StaffUser : IdentityUser<int>
{
    public string? DisplayName { get; set; }

    public DateTimeOffset CreatedAt { get; set; }
}

/// <summary>The roles staff accounts carry; what each may do is docs/api.md's table.</summary>
public static class StaffRoles
{
    public const string Admin = "admin";
    public const string Teacher = "teacher";
    public const string Aide = "aide";
    public const string Ops = "ops";

    public static IReadOnlyList<string> All { get; } = [Admin, Teacher, Aide, Ops];
}

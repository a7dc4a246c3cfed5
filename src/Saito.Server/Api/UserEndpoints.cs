using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Microsoft.AspNetCore.Identity;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;
using Saito.Server.Security;

namespace Saito.Server.Api;

public sealed record UserView(int Id, string UserName, string? DisplayName, IReadOnlyList<string> Roles, bool Disabled, DateTimeOffset? LockedUntil);

public sealed record NewUserRequest(
    [property: Required, StringLength(64, MinimumLength = 1), RegularExpression("^[A-Za-z0-9._@-]+$")] string UserName,
    [property: StringLength(200)] string? DisplayName,
    [property: Required, MinLength(1)] string[] Roles);

public sealed record NewUserResponse(UserView User, string Password);

public sealed record RolesRequest([property: Required, MinLength(1)] string[] Roles);

/// <summary>Staff accounts, for admins. A new account's password is generated and shown once.</summary>
internal static class UserEndpoints
{
    public static void MapUserEndpoints(this RouteGroupBuilder api)
    {
        var users = api.MapGroup("/users").WithTags("Staff accounts").RequireAuthorization(ApiPolicies.ManageUsers);
        users.MapGet("/", ListAsync).WithSummary("Staff accounts");
        users.MapPost("/", CreateAsync).WithSummary("Add an account; its password is in the answer, once");
        users.MapPut("/{id:int}/roles", SetRolesAsync).WithSummary("Replace an account's roles");
        users.MapPost("/{id:int}/reset-password", ResetPasswordAsync).WithSummary("A new generated password, shown once");
        users.MapPost("/{id:int}/disable", (int id, ClaimsPrincipal me, UserManager<StaffUser> u) => SetDisabledAsync(id, true, me, u)).WithSummary("Refuse the account's sign-ins");
        users.MapPost("/{id:int}/enable", (int id, ClaimsPrincipal me, UserManager<StaffUser> u) => SetDisabledAsync(id, false, me, u)).WithSummary("Accept the account again");
    }

    private static async Task<Page<UserView>> ListAsync([AsParameters] PageQuery page, UserManager<StaffUser> users, CancellationToken cancellationToken)
    {
        var list = await users.Users.OrderBy(u => u.UserName).Skip(page.Offset ?? 0).Take(page.Limit ?? PageQuery.DefaultLimit).ToListAsync(cancellationToken);
        var views = new List<UserView>(list.Count);
        foreach (var user in list)
        {
            views.Add(await ViewAsync(users, user));
        }

        return new Page<UserView>(views, page.Offset ?? 0, page.Limit ?? PageQuery.DefaultLimit, await users.Users.CountAsync(cancellationToken));
    }

    private static async Task<IResult> CreateAsync(NewUserRequest request, UserManager<StaffUser> users, TimeProvider time)
    {
        if (UnknownRole(request.Roles) is { } bad)
        {
            return bad;
        }

        var user = new StaffUser { UserName = request.UserName, DisplayName = request.DisplayName, CreatedAt = time.GetUtcNow() };
        string password = SecretHash.NewSecret();
        var created = await users.CreateAsync(user, password);
        if (!created.Succeeded)
        {
            return created.Errors.Any(e => e.Code == nameof(IdentityErrorDescriber.DuplicateUserName))
                ? Problems.Conflict($"An account named {request.UserName} exists already.")
                : IdentityProblems.From(created);
        }

        var roles = await users.AddToRolesAsync(user, request.Roles.Distinct(StringComparer.Ordinal));
        if (!roles.Succeeded)
        {
            await users.DeleteAsync(user);
            return IdentityProblems.From(roles);
        }

        return TypedResults.Created($"/api/users/{user.Id}", new NewUserResponse(await ViewAsync(users, user), password));
    }

    private static async Task<IResult> SetRolesAsync(int id, RolesRequest request, ClaimsPrincipal me, UserManager<StaffUser> users)
    {
        if (UnknownRole(request.Roles) is { } bad)
        {
            return bad;
        }

        if (await users.FindByIdAsync(id.ToString(System.Globalization.CultureInfo.InvariantCulture)) is not { } user)
        {
            return Problems.NotFound("account", id);
        }

        if (users.GetUserId(me) == user.Id.ToString(System.Globalization.CultureInfo.InvariantCulture) && !request.Roles.Contains(StaffRoles.Admin))
        {
            return Problems.Conflict("You cannot take the admin role from yourself; another admin can.");
        }

        var current = await users.GetRolesAsync(user);
        var removed = await users.RemoveFromRolesAsync(user, current.Except(request.Roles));
        var added = await users.AddToRolesAsync(user, request.Roles.Distinct().Except(current));
        if (!removed.Succeeded || !added.Succeeded)
        {
            return IdentityProblems.From(removed.Succeeded ? added : removed);
        }

        await users.UpdateSecurityStampAsync(user);
        return TypedResults.Ok(await ViewAsync(users, user));
    }

    private static async Task<IResult> ResetPasswordAsync(int id, UserManager<StaffUser> users)
    {
        if (await users.FindByIdAsync(id.ToString(System.Globalization.CultureInfo.InvariantCulture)) is not { } user)
        {
            return Problems.NotFound("account", id);
        }

        string password = SecretHash.NewSecret();
        var token = await users.GeneratePasswordResetTokenAsync(user);
        var reset = await users.ResetPasswordAsync(user, token, password);
        if (!reset.Succeeded)
        {
            return IdentityProblems.From(reset);
        }

        await users.ResetAccessFailedCountAsync(user);
        return TypedResults.Ok(new NewUserResponse(await ViewAsync(users, user), password));
    }

    private static async Task<IResult> SetDisabledAsync(int id, bool disabled, ClaimsPrincipal me, UserManager<StaffUser> users)
    {
        if (await users.FindByIdAsync(id.ToString(System.Globalization.CultureInfo.InvariantCulture)) is not { } user)
        {
            return Problems.NotFound("account", id);
        }

        if (disabled && users.GetUserId(me) == user.Id.ToString(System.Globalization.CultureInfo.InvariantCulture))
        {
            return Problems.Conflict("You cannot disable your own account.");
        }

        await users.SetLockoutEndDateAsync(user, disabled ? DateTimeOffset.MaxValue : null);
        // Signs the account out everywhere: its cookies and refresh tokens carry the old stamp.
        await users.UpdateSecurityStampAsync(user);
        return TypedResults.Ok(await ViewAsync(users, user));
    }

    internal static async Task<UserView> ViewAsync(UserManager<StaffUser> users, StaffUser user) =>
        new(user.Id, user.UserName!, user.DisplayName, [.. await users.GetRolesAsync(user)],
            IsDisabled(user), !IsDisabled(user) && user.LockoutEnd is { } end && end > DateTimeOffset.UtcNow ? end : null);

    /// <summary>
    /// Disabled: locked out until <see cref="DateTimeOffset.MaxValue"/>, as the database gives it back (PostgreSQL and
    /// SQLite keep microseconds, so it reads back as 23:59:59.999999 and never equals the value written).
    /// </summary>
    internal static bool IsDisabled(StaffUser user) => user.LockoutEnd is { Year: 9999 };

    private static IResult? UnknownRole(IEnumerable<string> roles) =>
        roles.FirstOrDefault(r => !StaffRoles.All.Contains(r)) is { } unknown
            ? Problems.Invalid("roles", $"'{unknown}' is not a role; roles are {string.Join(", ", StaffRoles.All)}.")
            : null;
}

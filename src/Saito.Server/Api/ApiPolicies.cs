using Saito.Registry.Model;

namespace Saito.Server.Api;

/// <summary>
/// Who may call what: each API endpoint requires one of these policies, each policy is a set of staff roles. The
/// table in docs/api.md lists every endpoint with its roles, and a test checks the table against the endpoints
/// and calls each one as every role (and anonymously).
/// </summary>
public static class ApiPolicies
{
    /// <summary>Owners, classes, sessions, rosters, check-ins: who is who and who is here.</summary>
    public const string ReadPeople = "people.read";

    /// <summary>Create and change owners, contacts, classes, timetables and rosters.</summary>
    public const string ManagePeople = "people.write";

    /// <summary>Contacts of a student: names and email addresses of families.</summary>
    public const string ReadContacts = "contacts.read";

    public const string ReadDevices = "devices.read";

    /// <summary>Add devices by hand, set their kind, retire them.</summary>
    public const string ManageDevices = "devices.write";

    /// <summary>Assign a device to an owner (sorting out new devices).</summary>
    public const string AssignDevices = "assignments.write";

    /// <summary>Check someone in or out by hand.</summary>
    public const string CheckIn = "checkins.write";

    /// <summary>Vital signs and other readings.</summary>
    public const string ReadReadings = "readings.read";

    /// <summary>Guardian notices and their delivery state.</summary>
    public const string ReadNotices = "notices.read";

    /// <summary>MQTT hub credentials.</summary>
    public const string ManageHubs = "hubs.manage";

    /// <summary>Staff accounts.</summary>
    public const string ManageUsers = "users.manage";

    /// <summary>The live class dashboard, student pages, check-in board and alerts: vitals of the classes one is listed on.</summary>
    public const string ViewLive = "live.view";

    /// <summary>The audit of who viewed whose vital signs.</summary>
    public const string ReadAudit = "audit.read";

    /// <summary>A student's alert thresholds, as a clinician sets them.</summary>
    public const string ManageThresholds = "thresholds.write";

    /// <summary>Each policy and the roles that satisfy it.</summary>
    public static IReadOnlyDictionary<string, string[]> Roles { get; } = new Dictionary<string, string[]>
    {
        [ReadPeople] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Aide],
        [ManagePeople] = [StaffRoles.Admin],
        [ReadContacts] = [StaffRoles.Admin, StaffRoles.Teacher],
        [ReadDevices] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Aide, StaffRoles.Ops],
        [ManageDevices] = [StaffRoles.Admin, StaffRoles.Ops],
        [AssignDevices] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Ops],
        [CheckIn] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Aide],
        [ReadReadings] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Aide],
        [ReadNotices] = [StaffRoles.Admin, StaffRoles.Ops],
        [ManageHubs] = [StaffRoles.Admin, StaffRoles.Ops],
        [ManageUsers] = [StaffRoles.Admin],
        [ViewLive] = [StaffRoles.Admin, StaffRoles.Teacher, StaffRoles.Aide],
        [ReadAudit] = [StaffRoles.Admin],
        [ManageThresholds] = [StaffRoles.Admin],
    };
}

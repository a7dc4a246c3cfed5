using System.Text;
using Microsoft.AspNetCore.Identity;
using Microsoft.AspNetCore.Identity.EntityFrameworkCore;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;

namespace Saito.Registry.Data;

/// <summary>
/// The registry's tables, in the same database as the hot readings. One subclass per provider
/// (<see cref="SqliteRegistryDbContext"/>, <see cref="PostgresRegistryDbContext"/>, <see cref="SqlServerRegistryDbContext"/>),
/// each with its own migrations set in <c>Migrations/&lt;Provider&gt;</c>: a provider's column types, filters and
/// time storage differ, so each gets migrations written for it. Names are snake_case like the reading tables.
/// </summary>
public abstract class RegistryDbContext : IdentityDbContext<StaffUser, IdentityRole<int>, int>
{
    /// <summary>Longest display name, contact name, room, class name.</summary>
    public const int NameLength = 200;

    /// <summary>Longest email address (RFC 5321's path limit).</summary>
    public const int EmailLength = 254;

    public const int ExternalRefLength = 64;

    public const int NoteLength = 1000;

    protected RegistryDbContext(DbContextOptions options)
        : base(options)
    {
    }

    public DbSet<Owner> Owners => Set<Owner>();

    public DbSet<Contact> Contacts => Set<Contact>();

    public DbSet<Device> Devices => Set<Device>();

    public DbSet<Assignment> Assignments => Set<Assignment>();

    public DbSet<SchoolClass> Classes => Set<SchoolClass>();

    public DbSet<TimetableSlot> TimetableSlots => Set<TimetableSlot>();

    public DbSet<RosterEntry> RosterEntries => Set<RosterEntry>();

    public DbSet<ClassSession> Sessions => Set<ClassSession>();

    public DbSet<CheckIn> CheckIns => Set<CheckIn>();

    public DbSet<Notice> Notices => Set<Notice>();

    public DbSet<ClassStaff> ClassStaff => Set<ClassStaff>();

    public DbSet<AlertRecord> Alerts => Set<AlertRecord>();

    public DbSet<VitalsView> VitalsViews => Set<VitalsView>();

    public DbSet<OwnerAlertThreshold> AlertThresholds => Set<OwnerAlertThreshold>();

    /// <summary>The filter that makes an index cover only open assignments (<c>assigned_to IS NULL</c>), quoted for the provider.</summary>
    protected abstract string OpenAssignmentFilter { get; }

    protected override void ConfigureConventions(ModelConfigurationBuilder configurationBuilder)
    {
        ArgumentNullException.ThrowIfNull(configurationBuilder);
        base.ConfigureConventions(configurationBuilder);
        configurationBuilder.Properties<OwnerKind>().HaveConversion<string>().HaveMaxLength(16);
        configurationBuilder.Properties<ContactRelationship>().HaveConversion<string>().HaveMaxLength(16);
        configurationBuilder.Properties<NoticeKind>().HaveConversion<string>().HaveMaxLength(16);
        configurationBuilder.Properties<NoticeState>().HaveConversion<string>().HaveMaxLength(16);
        configurationBuilder.Properties<DayOfWeek>().HaveConversion<string>().HaveMaxLength(10);
    }

    protected override void OnModelCreating(ModelBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        base.OnModelCreating(builder);

        builder.Entity<StaffUser>().ToTable("staff_user");
        builder.Entity<StaffUser>().Property(u => u.DisplayName).HasMaxLength(NameLength);
        builder.Entity<IdentityRole<int>>().ToTable("staff_role");
        // The roles are part of the schema: every database has the same four, with the same ids.
        builder.Entity<IdentityRole<int>>().HasData(StaffRoles.All.Select((name, i) => new IdentityRole<int>
        {
            Id = i + 1,
            Name = name,
            NormalizedName = name.ToUpperInvariant(),
            ConcurrencyStamp = "saito-role-" + name,
        }));
        builder.Entity<IdentityUserRole<int>>().ToTable("staff_user_role");
        builder.Entity<IdentityUserClaim<int>>().ToTable("staff_user_claim");
        builder.Entity<IdentityUserLogin<int>>().ToTable("staff_user_login");
        builder.Entity<IdentityUserToken<int>>().ToTable("staff_user_token");
        builder.Entity<IdentityRoleClaim<int>>().ToTable("staff_role_claim");

        builder.Entity<Owner>(e =>
        {
            e.ToTable("owner");
            e.Property(o => o.DisplayName).HasMaxLength(NameLength);
            e.Property(o => o.ExternalRef).HasMaxLength(ExternalRefLength);
            e.HasIndex(o => o.ExternalRef).IsUnique();
            e.Property(o => o.Version).IsConcurrencyToken();
            e.HasMany(o => o.Contacts).WithOne(c => c.Owner).HasForeignKey(c => c.OwnerId).OnDelete(DeleteBehavior.Cascade);
        });

        builder.Entity<Contact>(e =>
        {
            e.ToTable("contact");
            e.Property(c => c.Name).HasMaxLength(NameLength);
            e.Property(c => c.Email).HasMaxLength(EmailLength);
            e.Property(c => c.Language).HasMaxLength(16);
            e.Property(c => c.Version).IsConcurrencyToken();
        });

        builder.Entity<Device>(e =>
        {
            // Saito.Storage creates and owns this table (ingestion registers serials without the registry).
            e.ToTable("device", t => t.ExcludeFromMigrations());
            e.Property(d => d.Id).ValueGeneratedOnAdd();
            e.HasIndex(d => d.Serial).IsUnique();
        });

        builder.Entity<Assignment>(e =>
        {
            e.ToTable("assignment");
            e.Property(a => a.From).HasColumnName("assigned_from");
            e.Property(a => a.To).HasColumnName("assigned_to");
            e.Property(a => a.AssignedBy).HasMaxLength(NameLength);
            e.Property(a => a.Note).HasMaxLength(NoteLength);
            e.HasOne(a => a.Device).WithMany(d => d.Assignments).HasForeignKey(a => a.DeviceId).OnDelete(DeleteBehavior.Restrict);
            e.HasOne(a => a.Owner).WithMany().HasForeignKey(a => a.OwnerId).OnDelete(DeleteBehavior.Restrict);
            e.HasIndex(a => new { a.DeviceId, a.From });
            e.HasIndex(a => new { a.OwnerId, a.From });
            // At most one open assignment per device.
            e.HasIndex(a => a.DeviceId).IsUnique().HasFilter(OpenAssignmentFilter).HasDatabaseName("ix_assignment_open_device");
        });

        builder.Entity<SchoolClass>(e =>
        {
            e.ToTable("school_class");
            e.Property(c => c.Name).HasMaxLength(NameLength);
            e.HasIndex(c => c.Name).IsUnique();
            e.Property(c => c.Room).HasMaxLength(NameLength);
            e.Property(c => c.Version).IsConcurrencyToken();
            e.HasMany(c => c.Slots).WithOne().HasForeignKey(s => s.ClassId).OnDelete(DeleteBehavior.Cascade);
            e.HasMany(c => c.Roster).WithOne().HasForeignKey(r => r.ClassId).OnDelete(DeleteBehavior.Cascade);
        });

        builder.Entity<TimetableSlot>(e => e.ToTable("timetable_slot"));

        builder.Entity<RosterEntry>(e =>
        {
            e.ToTable("roster_entry");
            e.HasKey(r => new { r.ClassId, r.OwnerId });
            e.HasOne(r => r.Owner).WithMany().HasForeignKey(r => r.OwnerId).OnDelete(DeleteBehavior.Restrict);
        });

        builder.Entity<ClassSession>(e =>
        {
            e.ToTable("class_session");
            e.HasOne(s => s.Class).WithMany().HasForeignKey(s => s.ClassId).OnDelete(DeleteBehavior.Cascade);
            e.HasIndex(s => new { s.ClassId, s.StartsAt }).IsUnique();
            e.HasIndex(s => s.StartsAt);
        });

        builder.Entity<CheckIn>(e =>
        {
            e.ToTable("check_in");
            e.Property(c => c.Source).HasMaxLength(NameLength);
            e.HasOne(c => c.Owner).WithMany().HasForeignKey(c => c.OwnerId).OnDelete(DeleteBehavior.Restrict);
            e.HasIndex(c => new { c.OwnerId, c.SchoolDate }).IsUnique();
            e.HasIndex(c => c.SchoolDate);
        });

        builder.Entity<Notice>(e =>
        {
            e.ToTable("notice");
            e.Property(n => n.DedupKey).HasMaxLength(NameLength);
            e.HasIndex(n => n.DedupKey).IsUnique();
            e.Property(n => n.ToAddress).HasMaxLength(EmailLength);
            e.Property(n => n.Language).HasMaxLength(16);
            e.Property(n => n.MessageId).HasMaxLength(NameLength);
            e.Property(n => n.LastError).HasMaxLength(NoteLength);
            e.HasIndex(n => new { n.State, n.NextAttemptAt });
            e.HasIndex(n => n.OwnerId);
            e.HasOne<Owner>().WithMany().HasForeignKey(n => n.OwnerId).OnDelete(DeleteBehavior.Restrict);
            e.HasOne<Contact>().WithMany().HasForeignKey(n => n.ContactId).OnDelete(DeleteBehavior.Cascade);
        });

        builder.Entity<ClassStaff>(e =>
        {
            e.ToTable("class_staff");
            e.HasKey(c => new { c.ClassId, c.UserId });
            e.HasIndex(c => c.UserId);
            e.HasOne<SchoolClass>().WithMany().HasForeignKey(c => c.ClassId).OnDelete(DeleteBehavior.Cascade);
            e.HasOne<StaffUser>().WithMany().HasForeignKey(c => c.UserId).OnDelete(DeleteBehavior.Cascade);
        });

        builder.Entity<AlertRecord>(e =>
        {
            e.ToTable("alert");
            e.Property(a => a.Id).ValueGeneratedNever();
            e.Property(a => a.Kind).HasMaxLength(32);
            e.Property(a => a.Detail).HasMaxLength(NoteLength);
            e.Property(a => a.AcknowledgedBy).HasMaxLength(NameLength);
            e.HasIndex(a => a.RaisedAt);
            e.HasIndex(a => new { a.OwnerId, a.RaisedAt });
            e.HasOne<Owner>().WithMany().HasForeignKey(a => a.OwnerId).OnDelete(DeleteBehavior.Restrict);
        });

        builder.Entity<VitalsView>(e =>
        {
            e.ToTable("vitals_view");
            e.Property(v => v.UserName).HasMaxLength(NameLength);
            e.Property(v => v.Via).HasMaxLength(32);
            e.HasIndex(v => v.At);
            e.HasIndex(v => new { v.OwnerId, v.At });
            e.HasOne<Owner>().WithMany().HasForeignKey(v => v.OwnerId).OnDelete(DeleteBehavior.Restrict);
        });

        builder.Entity<OwnerAlertThreshold>(e =>
        {
            e.ToTable("owner_alert_threshold");
            e.HasKey(t => t.OwnerId);
            e.Property(t => t.Note).HasMaxLength(NoteLength);
            e.Property(t => t.SetBy).HasMaxLength(NameLength);
            e.Property(t => t.Version).IsConcurrencyToken();
            e.HasOne<Owner>().WithOne().HasForeignKey<OwnerAlertThreshold>(t => t.OwnerId).OnDelete(DeleteBehavior.Cascade);
        });

        ApplySnakeCaseNames(builder);
    }

    /// <summary>Every column, key, index and foreign key in snake_case, like the reading tables.</summary>
    private static void ApplySnakeCaseNames(ModelBuilder builder)
    {
        foreach (var entity in builder.Model.GetEntityTypes())
        {
            foreach (var property in entity.GetProperties())
            {
                if (property.GetColumnName() is { } column && column == property.Name)
                {
                    property.SetColumnName(SnakeCase(column));
                }
            }

            string table = entity.GetTableName() ?? SnakeCase(entity.ClrType.Name);
            foreach (var key in entity.GetKeys())
            {
                key.SetName(key.IsPrimaryKey() ? $"pk_{table}" : $"ak_{table}_{string.Join('_', key.Properties.Select(p => SnakeCase(p.Name)))}");
            }

            foreach (var foreignKey in entity.GetForeignKeys())
            {
                foreignKey.SetConstraintName($"fk_{table}_{string.Join('_', foreignKey.Properties.Select(p => SnakeCase(p.Name)))}");
            }

            foreach (var index in entity.GetIndexes())
            {
                if (index.GetDatabaseName() is { } name && !name.StartsWith("ix_", StringComparison.Ordinal))
                {
                    index.SetDatabaseName($"ix_{table}_{string.Join('_', index.Properties.Select(p => p.GetColumnName()))}");
                }
            }
        }
    }

    internal static string SnakeCase(string name)
    {
        var text = new StringBuilder(name.Length + 8);
        for (int i = 0; i < name.Length; i++)
        {
            char c = name[i];
            if (char.IsUpper(c))
            {
                if (i > 0 && (char.IsLower(name[i - 1]) || (i + 1 < name.Length && char.IsLower(name[i + 1]) && char.IsUpper(name[i - 1]))))
                {
                    text.Append('_');
                }

                text.Append(char.ToLowerInvariant(c));
            }
            else
            {
                text.Append(c);
            }
        }

        return text.ToString();
    }
}

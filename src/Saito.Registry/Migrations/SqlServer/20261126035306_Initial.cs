using System;
using Microsoft.EntityFrameworkCore.Migrations;

#nullable disable

#pragma warning disable CA1814 // Prefer jagged arrays over multidimensional

namespace Saito.Registry.Migrations.SqlServer
{
    /// <inheritdoc />
    public partial class Initial : Migration
    {
        /// <inheritdoc />
        protected override void Up(MigrationBuilder migrationBuilder)
        {
            migrationBuilder.CreateTable(
                name: "owner",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    kind = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: false),
                    display_name = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    external_ref = table.Column<string>(type: "nvarchar(64)", maxLength: 64, nullable: true),
                    active = table.Column<bool>(type: "bit", nullable: false),
                    created_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    updated_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    version = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_owner", x => x.id);
                });

            migrationBuilder.CreateTable(
                name: "school_class",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    name = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    room = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: true),
                    created_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    updated_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    version = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_school_class", x => x.id);
                });

            migrationBuilder.CreateTable(
                name: "staff_role",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    name = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    normalized_name = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    concurrency_stamp = table.Column<string>(type: "nvarchar(max)", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_role", x => x.id);
                });

            migrationBuilder.CreateTable(
                name: "staff_user",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    display_name = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: true),
                    created_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    user_name = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    normalized_user_name = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    email = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    normalized_email = table.Column<string>(type: "nvarchar(256)", maxLength: 256, nullable: true),
                    email_confirmed = table.Column<bool>(type: "bit", nullable: false),
                    password_hash = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    security_stamp = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    concurrency_stamp = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    phone_number = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    phone_number_confirmed = table.Column<bool>(type: "bit", nullable: false),
                    two_factor_enabled = table.Column<bool>(type: "bit", nullable: false),
                    lockout_end = table.Column<DateTime>(type: "datetime2(6)", nullable: true),
                    lockout_enabled = table.Column<bool>(type: "bit", nullable: false),
                    access_failed_count = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_user", x => x.id);
                });

            migrationBuilder.CreateTable(
                name: "assignment",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    device_id = table.Column<int>(type: "int", nullable: false),
                    owner_id = table.Column<int>(type: "int", nullable: false),
                    assigned_from = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    assigned_to = table.Column<DateTime>(type: "datetime2(6)", nullable: true),
                    assigned_by = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    note = table.Column<string>(type: "nvarchar(1000)", maxLength: 1000, nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_assignment", x => x.id);
                    table.ForeignKey(
                        name: "fk_assignment_device_id",
                        column: x => x.device_id,
                        principalTable: "device",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                    table.ForeignKey(
                        name: "fk_assignment_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.CreateTable(
                name: "check_in",
                columns: table => new
                {
                    id = table.Column<long>(type: "bigint", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    owner_id = table.Column<int>(type: "int", nullable: false),
                    school_date = table.Column<DateOnly>(type: "date", nullable: false),
                    checked_in_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    checked_out_at = table.Column<DateTime>(type: "datetime2(6)", nullable: true),
                    source = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    recorded_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_check_in", x => x.id);
                    table.ForeignKey(
                        name: "fk_check_in_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.CreateTable(
                name: "contact",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    owner_id = table.Column<int>(type: "int", nullable: false),
                    name = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    email = table.Column<string>(type: "nvarchar(254)", maxLength: 254, nullable: false),
                    relationship = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: false),
                    notify_arrival = table.Column<bool>(type: "bit", nullable: false),
                    notify_absence = table.Column<bool>(type: "bit", nullable: false),
                    language = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: true),
                    created_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    updated_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    version = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_contact", x => x.id);
                    table.ForeignKey(
                        name: "fk_contact_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "class_session",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    class_id = table.Column<int>(type: "int", nullable: false),
                    starts_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    ends_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    school_date = table.Column<DateOnly>(type: "date", nullable: false),
                    absences_checked_at = table.Column<DateTime>(type: "datetime2(6)", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_class_session", x => x.id);
                    table.ForeignKey(
                        name: "fk_class_session_class_id",
                        column: x => x.class_id,
                        principalTable: "school_class",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "roster_entry",
                columns: table => new
                {
                    class_id = table.Column<int>(type: "int", nullable: false),
                    owner_id = table.Column<int>(type: "int", nullable: false),
                    added_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_roster_entry", x => new { x.class_id, x.owner_id });
                    table.ForeignKey(
                        name: "fk_roster_entry_class_id",
                        column: x => x.class_id,
                        principalTable: "school_class",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                    table.ForeignKey(
                        name: "fk_roster_entry_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.CreateTable(
                name: "timetable_slot",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    class_id = table.Column<int>(type: "int", nullable: false),
                    day = table.Column<string>(type: "nvarchar(10)", maxLength: 10, nullable: false),
                    start = table.Column<TimeOnly>(type: "time", nullable: false),
                    duration_minutes = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_timetable_slot", x => x.id);
                    table.ForeignKey(
                        name: "fk_timetable_slot_class_id",
                        column: x => x.class_id,
                        principalTable: "school_class",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "staff_role_claim",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    role_id = table.Column<int>(type: "int", nullable: false),
                    claim_type = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    claim_value = table.Column<string>(type: "nvarchar(max)", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_role_claim", x => x.id);
                    table.ForeignKey(
                        name: "fk_staff_role_claim_role_id",
                        column: x => x.role_id,
                        principalTable: "staff_role",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "staff_user_claim",
                columns: table => new
                {
                    id = table.Column<int>(type: "int", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    user_id = table.Column<int>(type: "int", nullable: false),
                    claim_type = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    claim_value = table.Column<string>(type: "nvarchar(max)", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_user_claim", x => x.id);
                    table.ForeignKey(
                        name: "fk_staff_user_claim_user_id",
                        column: x => x.user_id,
                        principalTable: "staff_user",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "staff_user_login",
                columns: table => new
                {
                    login_provider = table.Column<string>(type: "nvarchar(450)", nullable: false),
                    provider_key = table.Column<string>(type: "nvarchar(450)", nullable: false),
                    provider_display_name = table.Column<string>(type: "nvarchar(max)", nullable: true),
                    user_id = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_user_login", x => new { x.login_provider, x.provider_key });
                    table.ForeignKey(
                        name: "fk_staff_user_login_user_id",
                        column: x => x.user_id,
                        principalTable: "staff_user",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "staff_user_role",
                columns: table => new
                {
                    user_id = table.Column<int>(type: "int", nullable: false),
                    role_id = table.Column<int>(type: "int", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_user_role", x => new { x.user_id, x.role_id });
                    table.ForeignKey(
                        name: "fk_staff_user_role_role_id",
                        column: x => x.role_id,
                        principalTable: "staff_role",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                    table.ForeignKey(
                        name: "fk_staff_user_role_user_id",
                        column: x => x.user_id,
                        principalTable: "staff_user",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "staff_user_token",
                columns: table => new
                {
                    user_id = table.Column<int>(type: "int", nullable: false),
                    login_provider = table.Column<string>(type: "nvarchar(450)", nullable: false),
                    name = table.Column<string>(type: "nvarchar(450)", nullable: false),
                    value = table.Column<string>(type: "nvarchar(max)", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_staff_user_token", x => new { x.user_id, x.login_provider, x.name });
                    table.ForeignKey(
                        name: "fk_staff_user_token_user_id",
                        column: x => x.user_id,
                        principalTable: "staff_user",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "notice",
                columns: table => new
                {
                    id = table.Column<long>(type: "bigint", nullable: false)
                        .Annotation("SqlServer:Identity", "1, 1"),
                    kind = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: false),
                    owner_id = table.Column<int>(type: "int", nullable: false),
                    contact_id = table.Column<int>(type: "int", nullable: false),
                    session_id = table.Column<int>(type: "int", nullable: true),
                    check_in_id = table.Column<long>(type: "bigint", nullable: true),
                    dedup_key = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false),
                    to_address = table.Column<string>(type: "nvarchar(254)", maxLength: 254, nullable: false),
                    language = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: false),
                    state = table.Column<string>(type: "nvarchar(16)", maxLength: 16, nullable: false),
                    attempts = table.Column<int>(type: "int", nullable: false),
                    created_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    next_attempt_at = table.Column<DateTime>(type: "datetime2(6)", nullable: false),
                    sent_at = table.Column<DateTime>(type: "datetime2(6)", nullable: true),
                    last_error = table.Column<string>(type: "nvarchar(1000)", maxLength: 1000, nullable: true),
                    message_id = table.Column<string>(type: "nvarchar(200)", maxLength: 200, nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_notice", x => x.id);
                    table.ForeignKey(
                        name: "fk_notice_contact_id",
                        column: x => x.contact_id,
                        principalTable: "contact",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                    table.ForeignKey(
                        name: "fk_notice_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.InsertData(
                table: "staff_role",
                columns: new[] { "id", "concurrency_stamp", "name", "normalized_name" },
                values: new object[,]
                {
                    { 1, "saito-role-admin", "admin", "ADMIN" },
                    { 2, "saito-role-teacher", "teacher", "TEACHER" },
                    { 3, "saito-role-aide", "aide", "AIDE" },
                    { 4, "saito-role-ops", "ops", "OPS" }
                });

            migrationBuilder.CreateIndex(
                name: "ix_assignment_device_id_assigned_from",
                table: "assignment",
                columns: new[] { "device_id", "assigned_from" });

            migrationBuilder.CreateIndex(
                name: "ix_assignment_open_device",
                table: "assignment",
                column: "device_id",
                unique: true,
                filter: "[assigned_to] IS NULL");

            migrationBuilder.CreateIndex(
                name: "ix_assignment_owner_id_assigned_from",
                table: "assignment",
                columns: new[] { "owner_id", "assigned_from" });

            migrationBuilder.CreateIndex(
                name: "ix_check_in_owner_id_school_date",
                table: "check_in",
                columns: new[] { "owner_id", "school_date" },
                unique: true);

            migrationBuilder.CreateIndex(
                name: "ix_check_in_school_date",
                table: "check_in",
                column: "school_date");

            migrationBuilder.CreateIndex(
                name: "ix_class_session_class_id_starts_at",
                table: "class_session",
                columns: new[] { "class_id", "starts_at" },
                unique: true);

            migrationBuilder.CreateIndex(
                name: "ix_class_session_starts_at",
                table: "class_session",
                column: "starts_at");

            migrationBuilder.CreateIndex(
                name: "ix_contact_owner_id",
                table: "contact",
                column: "owner_id");

            migrationBuilder.CreateIndex(
                name: "ix_notice_contact_id",
                table: "notice",
                column: "contact_id");

            migrationBuilder.CreateIndex(
                name: "ix_notice_dedup_key",
                table: "notice",
                column: "dedup_key",
                unique: true);

            migrationBuilder.CreateIndex(
                name: "ix_notice_owner_id",
                table: "notice",
                column: "owner_id");

            migrationBuilder.CreateIndex(
                name: "ix_notice_state_next_attempt_at",
                table: "notice",
                columns: new[] { "state", "next_attempt_at" });

            migrationBuilder.CreateIndex(
                name: "ix_owner_external_ref",
                table: "owner",
                column: "external_ref",
                unique: true,
                filter: "[external_ref] IS NOT NULL");

            migrationBuilder.CreateIndex(
                name: "ix_roster_entry_owner_id",
                table: "roster_entry",
                column: "owner_id");

            migrationBuilder.CreateIndex(
                name: "ix_school_class_name",
                table: "school_class",
                column: "name",
                unique: true);

            migrationBuilder.CreateIndex(
                name: "ix_staff_role_normalized_name",
                table: "staff_role",
                column: "normalized_name",
                unique: true,
                filter: "[normalized_name] IS NOT NULL");

            migrationBuilder.CreateIndex(
                name: "ix_staff_role_claim_role_id",
                table: "staff_role_claim",
                column: "role_id");

            migrationBuilder.CreateIndex(
                name: "ix_staff_user_normalized_email",
                table: "staff_user",
                column: "normalized_email");

            migrationBuilder.CreateIndex(
                name: "ix_staff_user_normalized_user_name",
                table: "staff_user",
                column: "normalized_user_name",
                unique: true,
                filter: "[normalized_user_name] IS NOT NULL");

            migrationBuilder.CreateIndex(
                name: "ix_staff_user_claim_user_id",
                table: "staff_user_claim",
                column: "user_id");

            migrationBuilder.CreateIndex(
                name: "ix_staff_user_login_user_id",
                table: "staff_user_login",
                column: "user_id");

            migrationBuilder.CreateIndex(
                name: "ix_staff_user_role_role_id",
                table: "staff_user_role",
                column: "role_id");

            migrationBuilder.CreateIndex(
                name: "ix_timetable_slot_class_id",
                table: "timetable_slot",
                column: "class_id");
        }

        /// <inheritdoc />
        protected override void Down(MigrationBuilder migrationBuilder)
        {
            migrationBuilder.DropTable(
                name: "assignment");

            migrationBuilder.DropTable(
                name: "check_in");

            migrationBuilder.DropTable(
                name: "class_session");

            migrationBuilder.DropTable(
                name: "notice");

            migrationBuilder.DropTable(
                name: "roster_entry");

            migrationBuilder.DropTable(
                name: "staff_role_claim");

            migrationBuilder.DropTable(
                name: "staff_user_claim");

            migrationBuilder.DropTable(
                name: "staff_user_login");

            migrationBuilder.DropTable(
                name: "staff_user_role");

            migrationBuilder.DropTable(
                name: "staff_user_token");

            migrationBuilder.DropTable(
                name: "timetable_slot");

            migrationBuilder.DropTable(
                name: "contact");

            migrationBuilder.DropTable(
                name: "staff_role");

            migrationBuilder.DropTable(
                name: "staff_user");

            migrationBuilder.DropTable(
                name: "school_class");

            migrationBuilder.DropTable(
                name: "owner");
        }
    }
}

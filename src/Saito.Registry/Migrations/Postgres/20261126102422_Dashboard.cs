using System;
using Microsoft.EntityFrameworkCore.Migrations;
using Npgsql.EntityFrameworkCore.PostgreSQL.Metadata;

#nullable disable

namespace Saito.Registry.Migrations.Postgres
{
    /// <inheritdoc />
    public partial class Dashboard : Migration
    {
        /// <inheritdoc />
        protected override void Up(MigrationBuilder migrationBuilder)
        {
            migrationBuilder.CreateTable(
                name: "alert",
                columns: table => new
                {
                    id = table.Column<Guid>(type: "uuid", nullable: false),
                    owner_id = table.Column<int>(type: "integer", nullable: false),
                    class_id = table.Column<int>(type: "integer", nullable: true),
                    kind = table.Column<string>(type: "character varying(32)", maxLength: 32, nullable: false),
                    raised_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: false),
                    level = table.Column<int>(type: "integer", nullable: false),
                    value = table.Column<double>(type: "double precision", nullable: true),
                    detail = table.Column<string>(type: "character varying(1000)", maxLength: 1000, nullable: false),
                    escalated_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: true),
                    acknowledged_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: true),
                    acknowledged_by = table.Column<string>(type: "character varying(200)", maxLength: 200, nullable: true),
                    cleared_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: true)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_alert", x => x.id);
                    table.ForeignKey(
                        name: "fk_alert_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.CreateTable(
                name: "class_staff",
                columns: table => new
                {
                    class_id = table.Column<int>(type: "integer", nullable: false),
                    user_id = table.Column<int>(type: "integer", nullable: false),
                    added_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_class_staff", x => new { x.class_id, x.user_id });
                    table.ForeignKey(
                        name: "fk_class_staff_class_id",
                        column: x => x.class_id,
                        principalTable: "school_class",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                    table.ForeignKey(
                        name: "fk_class_staff_user_id",
                        column: x => x.user_id,
                        principalTable: "staff_user",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "owner_alert_threshold",
                columns: table => new
                {
                    owner_id = table.Column<int>(type: "integer", nullable: false),
                    resting_heart_rate = table.Column<double>(type: "double precision", nullable: true),
                    tachycardia_factor = table.Column<double>(type: "double precision", nullable: true),
                    heart_rate_max = table.Column<double>(type: "double precision", nullable: true),
                    heart_rate_min = table.Column<double>(type: "double precision", nullable: true),
                    overheat_celsius = table.Column<double>(type: "double precision", nullable: true),
                    note = table.Column<string>(type: "character varying(1000)", maxLength: 1000, nullable: true),
                    set_by = table.Column<string>(type: "character varying(200)", maxLength: 200, nullable: false),
                    set_at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: false),
                    version = table.Column<int>(type: "integer", nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_owner_alert_threshold", x => x.owner_id);
                    table.ForeignKey(
                        name: "fk_owner_alert_threshold_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Cascade);
                });

            migrationBuilder.CreateTable(
                name: "vitals_view",
                columns: table => new
                {
                    id = table.Column<long>(type: "bigint", nullable: false)
                        .Annotation("Npgsql:ValueGenerationStrategy", NpgsqlValueGenerationStrategy.IdentityByDefaultColumn),
                    owner_id = table.Column<int>(type: "integer", nullable: false),
                    user_name = table.Column<string>(type: "character varying(200)", maxLength: 200, nullable: false),
                    at = table.Column<DateTimeOffset>(type: "timestamp with time zone", nullable: false),
                    via = table.Column<string>(type: "character varying(32)", maxLength: 32, nullable: false)
                },
                constraints: table =>
                {
                    table.PrimaryKey("pk_vitals_view", x => x.id);
                    table.ForeignKey(
                        name: "fk_vitals_view_owner_id",
                        column: x => x.owner_id,
                        principalTable: "owner",
                        principalColumn: "id",
                        onDelete: ReferentialAction.Restrict);
                });

            migrationBuilder.CreateIndex(
                name: "ix_alert_owner_id_raised_at",
                table: "alert",
                columns: new[] { "owner_id", "raised_at" });

            migrationBuilder.CreateIndex(
                name: "ix_alert_raised_at",
                table: "alert",
                column: "raised_at");

            migrationBuilder.CreateIndex(
                name: "ix_class_staff_user_id",
                table: "class_staff",
                column: "user_id");

            migrationBuilder.CreateIndex(
                name: "ix_vitals_view_at",
                table: "vitals_view",
                column: "at");

            migrationBuilder.CreateIndex(
                name: "ix_vitals_view_owner_id_at",
                table: "vitals_view",
                columns: new[] { "owner_id", "at" });
        }

        /// <inheritdoc />
        protected override void Down(MigrationBuilder migrationBuilder)
        {
            migrationBuilder.DropTable(
                name: "alert");

            migrationBuilder.DropTable(
                name: "class_staff");

            migrationBuilder.DropTable(
                name: "owner_alert_threshold");

            migrationBuilder.DropTable(
                name: "vitals_view");
        }
    }
}

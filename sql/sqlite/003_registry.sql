CREATE TABLE IF NOT EXISTS "__EFMigrationsHistory" (
    "MigrationId" TEXT NOT NULL CONSTRAINT "PK___EFMigrationsHistory" PRIMARY KEY,
    "ProductVersion" TEXT NOT NULL
);

BEGIN TRANSACTION;
CREATE TABLE "owner" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_owner" PRIMARY KEY AUTOINCREMENT,
    "kind" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "external_ref" TEXT NULL,
    "active" INTEGER NOT NULL,
    "created_at" INTEGER NOT NULL,
    "updated_at" INTEGER NOT NULL,
    "version" INTEGER NOT NULL
);

CREATE TABLE "school_class" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_school_class" PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NOT NULL,
    "room" TEXT NULL,
    "created_at" INTEGER NOT NULL,
    "updated_at" INTEGER NOT NULL,
    "version" INTEGER NOT NULL
);

CREATE TABLE "staff_role" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_staff_role" PRIMARY KEY AUTOINCREMENT,
    "name" TEXT NULL,
    "normalized_name" TEXT NULL,
    "concurrency_stamp" TEXT NULL
);

CREATE TABLE "staff_user" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_staff_user" PRIMARY KEY AUTOINCREMENT,
    "display_name" TEXT NULL,
    "created_at" INTEGER NOT NULL,
    "user_name" TEXT NULL,
    "normalized_user_name" TEXT NULL,
    "email" TEXT NULL,
    "normalized_email" TEXT NULL,
    "email_confirmed" INTEGER NOT NULL,
    "password_hash" TEXT NULL,
    "security_stamp" TEXT NULL,
    "concurrency_stamp" TEXT NULL,
    "phone_number" TEXT NULL,
    "phone_number_confirmed" INTEGER NOT NULL,
    "two_factor_enabled" INTEGER NOT NULL,
    "lockout_end" INTEGER NULL,
    "lockout_enabled" INTEGER NOT NULL,
    "access_failed_count" INTEGER NOT NULL
);

CREATE TABLE "assignment" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_assignment" PRIMARY KEY AUTOINCREMENT,
    "device_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "assigned_from" INTEGER NOT NULL,
    "assigned_to" INTEGER NULL,
    "assigned_by" TEXT NOT NULL,
    "note" TEXT NULL,
    CONSTRAINT "fk_assignment_device_id" FOREIGN KEY ("device_id") REFERENCES "device" ("id") ON DELETE RESTRICT,
    CONSTRAINT "fk_assignment_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

CREATE TABLE "check_in" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_check_in" PRIMARY KEY AUTOINCREMENT,
    "owner_id" INTEGER NOT NULL,
    "school_date" TEXT NOT NULL,
    "checked_in_at" INTEGER NOT NULL,
    "checked_out_at" INTEGER NULL,
    "source" TEXT NOT NULL,
    "recorded_at" INTEGER NOT NULL,
    CONSTRAINT "fk_check_in_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

CREATE TABLE "contact" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_contact" PRIMARY KEY AUTOINCREMENT,
    "owner_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "relationship" TEXT NOT NULL,
    "notify_arrival" INTEGER NOT NULL,
    "notify_absence" INTEGER NOT NULL,
    "language" TEXT NULL,
    "created_at" INTEGER NOT NULL,
    "updated_at" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    CONSTRAINT "fk_contact_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE CASCADE
);

CREATE TABLE "class_session" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_class_session" PRIMARY KEY AUTOINCREMENT,
    "class_id" INTEGER NOT NULL,
    "starts_at" INTEGER NOT NULL,
    "ends_at" INTEGER NOT NULL,
    "school_date" TEXT NOT NULL,
    "absences_checked_at" INTEGER NULL,
    CONSTRAINT "fk_class_session_class_id" FOREIGN KEY ("class_id") REFERENCES "school_class" ("id") ON DELETE CASCADE
);

CREATE TABLE "roster_entry" (
    "class_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "added_at" INTEGER NOT NULL,
    CONSTRAINT "pk_roster_entry" PRIMARY KEY ("class_id", "owner_id"),
    CONSTRAINT "fk_roster_entry_class_id" FOREIGN KEY ("class_id") REFERENCES "school_class" ("id") ON DELETE CASCADE,
    CONSTRAINT "fk_roster_entry_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

CREATE TABLE "timetable_slot" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_timetable_slot" PRIMARY KEY AUTOINCREMENT,
    "class_id" INTEGER NOT NULL,
    "day" TEXT NOT NULL,
    "start" TEXT NOT NULL,
    "duration_minutes" INTEGER NOT NULL,
    CONSTRAINT "fk_timetable_slot_class_id" FOREIGN KEY ("class_id") REFERENCES "school_class" ("id") ON DELETE CASCADE
);

CREATE TABLE "staff_role_claim" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_staff_role_claim" PRIMARY KEY AUTOINCREMENT,
    "role_id" INTEGER NOT NULL,
    "claim_type" TEXT NULL,
    "claim_value" TEXT NULL,
    CONSTRAINT "fk_staff_role_claim_role_id" FOREIGN KEY ("role_id") REFERENCES "staff_role" ("id") ON DELETE CASCADE
);

CREATE TABLE "staff_user_claim" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_staff_user_claim" PRIMARY KEY AUTOINCREMENT,
    "user_id" INTEGER NOT NULL,
    "claim_type" TEXT NULL,
    "claim_value" TEXT NULL,
    CONSTRAINT "fk_staff_user_claim_user_id" FOREIGN KEY ("user_id") REFERENCES "staff_user" ("id") ON DELETE CASCADE
);

CREATE TABLE "staff_user_login" (
    "login_provider" TEXT NOT NULL,
    "provider_key" TEXT NOT NULL,
    "provider_display_name" TEXT NULL,
    "user_id" INTEGER NOT NULL,
    CONSTRAINT "pk_staff_user_login" PRIMARY KEY ("login_provider", "provider_key"),
    CONSTRAINT "fk_staff_user_login_user_id" FOREIGN KEY ("user_id") REFERENCES "staff_user" ("id") ON DELETE CASCADE
);

CREATE TABLE "staff_user_role" (
    "user_id" INTEGER NOT NULL,
    "role_id" INTEGER NOT NULL,
    CONSTRAINT "pk_staff_user_role" PRIMARY KEY ("user_id", "role_id"),
    CONSTRAINT "fk_staff_user_role_role_id" FOREIGN KEY ("role_id") REFERENCES "staff_role" ("id") ON DELETE CASCADE,
    CONSTRAINT "fk_staff_user_role_user_id" FOREIGN KEY ("user_id") REFERENCES "staff_user" ("id") ON DELETE CASCADE
);

CREATE TABLE "staff_user_token" (
    "user_id" INTEGER NOT NULL,
    "login_provider" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NULL,
    CONSTRAINT "pk_staff_user_token" PRIMARY KEY ("user_id", "login_provider", "name"),
    CONSTRAINT "fk_staff_user_token_user_id" FOREIGN KEY ("user_id") REFERENCES "staff_user" ("id") ON DELETE CASCADE
);

CREATE TABLE "notice" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_notice" PRIMARY KEY AUTOINCREMENT,
    "kind" TEXT NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "contact_id" INTEGER NOT NULL,
    "session_id" INTEGER NULL,
    "check_in_id" INTEGER NULL,
    "dedup_key" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "created_at" INTEGER NOT NULL,
    "next_attempt_at" INTEGER NOT NULL,
    "sent_at" INTEGER NULL,
    "last_error" TEXT NULL,
    "message_id" TEXT NOT NULL,
    CONSTRAINT "fk_notice_contact_id" FOREIGN KEY ("contact_id") REFERENCES "contact" ("id") ON DELETE CASCADE,
    CONSTRAINT "fk_notice_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

INSERT INTO "staff_role" ("id", "concurrency_stamp", "name", "normalized_name")
VALUES (1, 'saito-role-admin', 'admin', 'ADMIN');
SELECT changes();

INSERT INTO "staff_role" ("id", "concurrency_stamp", "name", "normalized_name")
VALUES (2, 'saito-role-teacher', 'teacher', 'TEACHER');
SELECT changes();

INSERT INTO "staff_role" ("id", "concurrency_stamp", "name", "normalized_name")
VALUES (3, 'saito-role-aide', 'aide', 'AIDE');
SELECT changes();

INSERT INTO "staff_role" ("id", "concurrency_stamp", "name", "normalized_name")
VALUES (4, 'saito-role-ops', 'ops', 'OPS');
SELECT changes();


CREATE INDEX "ix_assignment_device_id_assigned_from" ON "assignment" ("device_id", "assigned_from");

CREATE UNIQUE INDEX "ix_assignment_open_device" ON "assignment" ("device_id") WHERE "assigned_to" IS NULL;

CREATE INDEX "ix_assignment_owner_id_assigned_from" ON "assignment" ("owner_id", "assigned_from");

CREATE UNIQUE INDEX "ix_check_in_owner_id_school_date" ON "check_in" ("owner_id", "school_date");

CREATE INDEX "ix_check_in_school_date" ON "check_in" ("school_date");

CREATE UNIQUE INDEX "ix_class_session_class_id_starts_at" ON "class_session" ("class_id", "starts_at");

CREATE INDEX "ix_class_session_starts_at" ON "class_session" ("starts_at");

CREATE INDEX "ix_contact_owner_id" ON "contact" ("owner_id");

CREATE INDEX "ix_notice_contact_id" ON "notice" ("contact_id");

CREATE UNIQUE INDEX "ix_notice_dedup_key" ON "notice" ("dedup_key");

CREATE INDEX "ix_notice_owner_id" ON "notice" ("owner_id");

CREATE INDEX "ix_notice_state_next_attempt_at" ON "notice" ("state", "next_attempt_at");

CREATE UNIQUE INDEX "ix_owner_external_ref" ON "owner" ("external_ref");

CREATE INDEX "ix_roster_entry_owner_id" ON "roster_entry" ("owner_id");

CREATE UNIQUE INDEX "ix_school_class_name" ON "school_class" ("name");

CREATE UNIQUE INDEX "ix_staff_role_normalized_name" ON "staff_role" ("normalized_name");

CREATE INDEX "ix_staff_role_claim_role_id" ON "staff_role_claim" ("role_id");

CREATE INDEX "ix_staff_user_normalized_email" ON "staff_user" ("normalized_email");

CREATE UNIQUE INDEX "ix_staff_user_normalized_user_name" ON "staff_user" ("normalized_user_name");

CREATE INDEX "ix_staff_user_claim_user_id" ON "staff_user_claim" ("user_id");

CREATE INDEX "ix_staff_user_login_user_id" ON "staff_user_login" ("user_id");

CREATE INDEX "ix_staff_user_role_role_id" ON "staff_user_role" ("role_id");

CREATE INDEX "ix_timetable_slot_class_id" ON "timetable_slot" ("class_id");

INSERT INTO "__EFMigrationsHistory" ("MigrationId", "ProductVersion")
VALUES ('20261126035239_Initial', '10.0.15');

COMMIT;

BEGIN TRANSACTION;
CREATE TABLE "alert" (
    "id" TEXT NOT NULL CONSTRAINT "pk_alert" PRIMARY KEY,
    "owner_id" INTEGER NOT NULL,
    "class_id" INTEGER NULL,
    "kind" TEXT NOT NULL,
    "raised_at" INTEGER NOT NULL,
    "level" INTEGER NOT NULL,
    "value" REAL NULL,
    "detail" TEXT NOT NULL,
    "escalated_at" INTEGER NULL,
    "acknowledged_at" INTEGER NULL,
    "acknowledged_by" TEXT NULL,
    "cleared_at" INTEGER NULL,
    CONSTRAINT "fk_alert_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

CREATE TABLE "class_staff" (
    "class_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "added_at" INTEGER NOT NULL,
    CONSTRAINT "pk_class_staff" PRIMARY KEY ("class_id", "user_id"),
    CONSTRAINT "fk_class_staff_class_id" FOREIGN KEY ("class_id") REFERENCES "school_class" ("id") ON DELETE CASCADE,
    CONSTRAINT "fk_class_staff_user_id" FOREIGN KEY ("user_id") REFERENCES "staff_user" ("id") ON DELETE CASCADE
);

CREATE TABLE "owner_alert_threshold" (
    "owner_id" INTEGER NOT NULL CONSTRAINT "pk_owner_alert_threshold" PRIMARY KEY,
    "resting_heart_rate" REAL NULL,
    "tachycardia_factor" REAL NULL,
    "heart_rate_max" REAL NULL,
    "heart_rate_min" REAL NULL,
    "overheat_celsius" REAL NULL,
    "note" TEXT NULL,
    "set_by" TEXT NOT NULL,
    "set_at" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    CONSTRAINT "fk_owner_alert_threshold_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE CASCADE
);

CREATE TABLE "vitals_view" (
    "id" INTEGER NOT NULL CONSTRAINT "pk_vitals_view" PRIMARY KEY AUTOINCREMENT,
    "owner_id" INTEGER NOT NULL,
    "user_name" TEXT NOT NULL,
    "at" INTEGER NOT NULL,
    "via" TEXT NOT NULL,
    CONSTRAINT "fk_vitals_view_owner_id" FOREIGN KEY ("owner_id") REFERENCES "owner" ("id") ON DELETE RESTRICT
);

CREATE INDEX "ix_alert_owner_id_raised_at" ON "alert" ("owner_id", "raised_at");

CREATE INDEX "ix_alert_raised_at" ON "alert" ("raised_at");

CREATE INDEX "ix_class_staff_user_id" ON "class_staff" ("user_id");

CREATE INDEX "ix_vitals_view_at" ON "vitals_view" ("at");

CREATE INDEX "ix_vitals_view_owner_id_at" ON "vitals_view" ("owner_id", "at");

INSERT INTO "__EFMigrationsHistory" ("MigrationId", "ProductVersion")
VALUES ('20261126102417_Dashboard', '10.0.15');

COMMIT;


IF OBJECT_ID(N'[__EFMigrationsHistory]') IS NULL
BEGIN
    CREATE TABLE [__EFMigrationsHistory] (
        [MigrationId] nvarchar(150) NOT NULL,
        [ProductVersion] nvarchar(32) NOT NULL,
        CONSTRAINT [PK___EFMigrationsHistory] PRIMARY KEY ([MigrationId])
    );
END;
GO

BEGIN TRANSACTION;
IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [owner] (
        [id] int NOT NULL IDENTITY,
        [kind] nvarchar(16) NOT NULL,
        [display_name] nvarchar(200) NOT NULL,
        [external_ref] nvarchar(64) NULL,
        [active] bit NOT NULL,
        [created_at] datetime2(6) NOT NULL,
        [updated_at] datetime2(6) NOT NULL,
        [version] int NOT NULL,
        CONSTRAINT [pk_owner] PRIMARY KEY ([id])
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [school_class] (
        [id] int NOT NULL IDENTITY,
        [name] nvarchar(200) NOT NULL,
        [room] nvarchar(200) NULL,
        [created_at] datetime2(6) NOT NULL,
        [updated_at] datetime2(6) NOT NULL,
        [version] int NOT NULL,
        CONSTRAINT [pk_school_class] PRIMARY KEY ([id])
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_role] (
        [id] int NOT NULL IDENTITY,
        [name] nvarchar(256) NULL,
        [normalized_name] nvarchar(256) NULL,
        [concurrency_stamp] nvarchar(max) NULL,
        CONSTRAINT [pk_staff_role] PRIMARY KEY ([id])
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_user] (
        [id] int NOT NULL IDENTITY,
        [display_name] nvarchar(200) NULL,
        [created_at] datetime2(6) NOT NULL,
        [user_name] nvarchar(256) NULL,
        [normalized_user_name] nvarchar(256) NULL,
        [email] nvarchar(256) NULL,
        [normalized_email] nvarchar(256) NULL,
        [email_confirmed] bit NOT NULL,
        [password_hash] nvarchar(max) NULL,
        [security_stamp] nvarchar(max) NULL,
        [concurrency_stamp] nvarchar(max) NULL,
        [phone_number] nvarchar(max) NULL,
        [phone_number_confirmed] bit NOT NULL,
        [two_factor_enabled] bit NOT NULL,
        [lockout_end] datetime2(6) NULL,
        [lockout_enabled] bit NOT NULL,
        [access_failed_count] int NOT NULL,
        CONSTRAINT [pk_staff_user] PRIMARY KEY ([id])
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [assignment] (
        [id] int NOT NULL IDENTITY,
        [device_id] int NOT NULL,
        [owner_id] int NOT NULL,
        [assigned_from] datetime2(6) NOT NULL,
        [assigned_to] datetime2(6) NULL,
        [assigned_by] nvarchar(200) NOT NULL,
        [note] nvarchar(1000) NULL,
        CONSTRAINT [pk_assignment] PRIMARY KEY ([id]),
        CONSTRAINT [fk_assignment_device_id] FOREIGN KEY ([device_id]) REFERENCES [device] ([id]) ON DELETE NO ACTION,
        CONSTRAINT [fk_assignment_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [check_in] (
        [id] bigint NOT NULL IDENTITY,
        [owner_id] int NOT NULL,
        [school_date] date NOT NULL,
        [checked_in_at] datetime2(6) NOT NULL,
        [checked_out_at] datetime2(6) NULL,
        [source] nvarchar(200) NOT NULL,
        [recorded_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_check_in] PRIMARY KEY ([id]),
        CONSTRAINT [fk_check_in_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [contact] (
        [id] int NOT NULL IDENTITY,
        [owner_id] int NOT NULL,
        [name] nvarchar(200) NOT NULL,
        [email] nvarchar(254) NOT NULL,
        [relationship] nvarchar(16) NOT NULL,
        [notify_arrival] bit NOT NULL,
        [notify_absence] bit NOT NULL,
        [language] nvarchar(16) NULL,
        [created_at] datetime2(6) NOT NULL,
        [updated_at] datetime2(6) NOT NULL,
        [version] int NOT NULL,
        CONSTRAINT [pk_contact] PRIMARY KEY ([id]),
        CONSTRAINT [fk_contact_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [class_session] (
        [id] int NOT NULL IDENTITY,
        [class_id] int NOT NULL,
        [starts_at] datetime2(6) NOT NULL,
        [ends_at] datetime2(6) NOT NULL,
        [school_date] date NOT NULL,
        [absences_checked_at] datetime2(6) NULL,
        CONSTRAINT [pk_class_session] PRIMARY KEY ([id]),
        CONSTRAINT [fk_class_session_class_id] FOREIGN KEY ([class_id]) REFERENCES [school_class] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [roster_entry] (
        [class_id] int NOT NULL,
        [owner_id] int NOT NULL,
        [added_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_roster_entry] PRIMARY KEY ([class_id], [owner_id]),
        CONSTRAINT [fk_roster_entry_class_id] FOREIGN KEY ([class_id]) REFERENCES [school_class] ([id]) ON DELETE CASCADE,
        CONSTRAINT [fk_roster_entry_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [timetable_slot] (
        [id] int NOT NULL IDENTITY,
        [class_id] int NOT NULL,
        [day] nvarchar(10) NOT NULL,
        [start] time NOT NULL,
        [duration_minutes] int NOT NULL,
        CONSTRAINT [pk_timetable_slot] PRIMARY KEY ([id]),
        CONSTRAINT [fk_timetable_slot_class_id] FOREIGN KEY ([class_id]) REFERENCES [school_class] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_role_claim] (
        [id] int NOT NULL IDENTITY,
        [role_id] int NOT NULL,
        [claim_type] nvarchar(max) NULL,
        [claim_value] nvarchar(max) NULL,
        CONSTRAINT [pk_staff_role_claim] PRIMARY KEY ([id]),
        CONSTRAINT [fk_staff_role_claim_role_id] FOREIGN KEY ([role_id]) REFERENCES [staff_role] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_user_claim] (
        [id] int NOT NULL IDENTITY,
        [user_id] int NOT NULL,
        [claim_type] nvarchar(max) NULL,
        [claim_value] nvarchar(max) NULL,
        CONSTRAINT [pk_staff_user_claim] PRIMARY KEY ([id]),
        CONSTRAINT [fk_staff_user_claim_user_id] FOREIGN KEY ([user_id]) REFERENCES [staff_user] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_user_login] (
        [login_provider] nvarchar(450) NOT NULL,
        [provider_key] nvarchar(450) NOT NULL,
        [provider_display_name] nvarchar(max) NULL,
        [user_id] int NOT NULL,
        CONSTRAINT [pk_staff_user_login] PRIMARY KEY ([login_provider], [provider_key]),
        CONSTRAINT [fk_staff_user_login_user_id] FOREIGN KEY ([user_id]) REFERENCES [staff_user] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_user_role] (
        [user_id] int NOT NULL,
        [role_id] int NOT NULL,
        CONSTRAINT [pk_staff_user_role] PRIMARY KEY ([user_id], [role_id]),
        CONSTRAINT [fk_staff_user_role_role_id] FOREIGN KEY ([role_id]) REFERENCES [staff_role] ([id]) ON DELETE CASCADE,
        CONSTRAINT [fk_staff_user_role_user_id] FOREIGN KEY ([user_id]) REFERENCES [staff_user] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [staff_user_token] (
        [user_id] int NOT NULL,
        [login_provider] nvarchar(450) NOT NULL,
        [name] nvarchar(450) NOT NULL,
        [value] nvarchar(max) NULL,
        CONSTRAINT [pk_staff_user_token] PRIMARY KEY ([user_id], [login_provider], [name]),
        CONSTRAINT [fk_staff_user_token_user_id] FOREIGN KEY ([user_id]) REFERENCES [staff_user] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE TABLE [notice] (
        [id] bigint NOT NULL IDENTITY,
        [kind] nvarchar(16) NOT NULL,
        [owner_id] int NOT NULL,
        [contact_id] int NOT NULL,
        [session_id] int NULL,
        [check_in_id] bigint NULL,
        [dedup_key] nvarchar(200) NOT NULL,
        [to_address] nvarchar(254) NOT NULL,
        [language] nvarchar(16) NOT NULL,
        [state] nvarchar(16) NOT NULL,
        [attempts] int NOT NULL,
        [created_at] datetime2(6) NOT NULL,
        [next_attempt_at] datetime2(6) NOT NULL,
        [sent_at] datetime2(6) NULL,
        [last_error] nvarchar(1000) NULL,
        [message_id] nvarchar(200) NOT NULL,
        CONSTRAINT [pk_notice] PRIMARY KEY ([id]),
        CONSTRAINT [fk_notice_contact_id] FOREIGN KEY ([contact_id]) REFERENCES [contact] ([id]) ON DELETE CASCADE,
        CONSTRAINT [fk_notice_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    IF EXISTS (SELECT * FROM [sys].[identity_columns] WHERE [name] IN (N'id', N'concurrency_stamp', N'name', N'normalized_name') AND [object_id] = OBJECT_ID(N'[staff_role]'))
        SET IDENTITY_INSERT [staff_role] ON;
    EXEC(N'INSERT INTO [staff_role] ([id], [concurrency_stamp], [name], [normalized_name])
    VALUES (1, N''saito-role-admin'', N''admin'', N''ADMIN''),
    (2, N''saito-role-teacher'', N''teacher'', N''TEACHER''),
    (3, N''saito-role-aide'', N''aide'', N''AIDE''),
    (4, N''saito-role-ops'', N''ops'', N''OPS'')');
    IF EXISTS (SELECT * FROM [sys].[identity_columns] WHERE [name] IN (N'id', N'concurrency_stamp', N'name', N'normalized_name') AND [object_id] = OBJECT_ID(N'[staff_role]'))
        SET IDENTITY_INSERT [staff_role] OFF;
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_assignment_device_id_assigned_from] ON [assignment] ([device_id], [assigned_from]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    EXEC(N'CREATE UNIQUE INDEX [ix_assignment_open_device] ON [assignment] ([device_id]) WHERE [assigned_to] IS NULL');
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_assignment_owner_id_assigned_from] ON [assignment] ([owner_id], [assigned_from]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE UNIQUE INDEX [ix_check_in_owner_id_school_date] ON [check_in] ([owner_id], [school_date]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_check_in_school_date] ON [check_in] ([school_date]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE UNIQUE INDEX [ix_class_session_class_id_starts_at] ON [class_session] ([class_id], [starts_at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_class_session_starts_at] ON [class_session] ([starts_at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_contact_owner_id] ON [contact] ([owner_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_notice_contact_id] ON [notice] ([contact_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE UNIQUE INDEX [ix_notice_dedup_key] ON [notice] ([dedup_key]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_notice_owner_id] ON [notice] ([owner_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_notice_state_next_attempt_at] ON [notice] ([state], [next_attempt_at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    EXEC(N'CREATE UNIQUE INDEX [ix_owner_external_ref] ON [owner] ([external_ref]) WHERE [external_ref] IS NOT NULL');
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_roster_entry_owner_id] ON [roster_entry] ([owner_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE UNIQUE INDEX [ix_school_class_name] ON [school_class] ([name]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    EXEC(N'CREATE UNIQUE INDEX [ix_staff_role_normalized_name] ON [staff_role] ([normalized_name]) WHERE [normalized_name] IS NOT NULL');
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_staff_role_claim_role_id] ON [staff_role_claim] ([role_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_staff_user_normalized_email] ON [staff_user] ([normalized_email]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    EXEC(N'CREATE UNIQUE INDEX [ix_staff_user_normalized_user_name] ON [staff_user] ([normalized_user_name]) WHERE [normalized_user_name] IS NOT NULL');
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_staff_user_claim_user_id] ON [staff_user_claim] ([user_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_staff_user_login_user_id] ON [staff_user_login] ([user_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_staff_user_role_role_id] ON [staff_user_role] ([role_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    CREATE INDEX [ix_timetable_slot_class_id] ON [timetable_slot] ([class_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126035306_Initial'
)
BEGIN
    INSERT INTO [__EFMigrationsHistory] ([MigrationId], [ProductVersion])
    VALUES (N'20261126035306_Initial', N'10.0.15');
END;

COMMIT;
GO

BEGIN TRANSACTION;
IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE TABLE [alert] (
        [id] uniqueidentifier NOT NULL,
        [owner_id] int NOT NULL,
        [class_id] int NULL,
        [kind] nvarchar(32) NOT NULL,
        [raised_at] datetime2(6) NOT NULL,
        [level] int NOT NULL,
        [value] float NULL,
        [detail] nvarchar(1000) NOT NULL,
        [escalated_at] datetime2(6) NULL,
        [acknowledged_at] datetime2(6) NULL,
        [acknowledged_by] nvarchar(200) NULL,
        [cleared_at] datetime2(6) NULL,
        CONSTRAINT [pk_alert] PRIMARY KEY ([id]),
        CONSTRAINT [fk_alert_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE TABLE [class_staff] (
        [class_id] int NOT NULL,
        [user_id] int NOT NULL,
        [added_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_class_staff] PRIMARY KEY ([class_id], [user_id]),
        CONSTRAINT [fk_class_staff_class_id] FOREIGN KEY ([class_id]) REFERENCES [school_class] ([id]) ON DELETE CASCADE,
        CONSTRAINT [fk_class_staff_user_id] FOREIGN KEY ([user_id]) REFERENCES [staff_user] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE TABLE [owner_alert_threshold] (
        [owner_id] int NOT NULL,
        [resting_heart_rate] float NULL,
        [tachycardia_factor] float NULL,
        [heart_rate_max] float NULL,
        [heart_rate_min] float NULL,
        [overheat_celsius] float NULL,
        [note] nvarchar(1000) NULL,
        [set_by] nvarchar(200) NOT NULL,
        [set_at] datetime2(6) NOT NULL,
        [version] int NOT NULL,
        CONSTRAINT [pk_owner_alert_threshold] PRIMARY KEY ([owner_id]),
        CONSTRAINT [fk_owner_alert_threshold_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE CASCADE
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE TABLE [vitals_view] (
        [id] bigint NOT NULL IDENTITY,
        [owner_id] int NOT NULL,
        [user_name] nvarchar(200) NOT NULL,
        [at] datetime2(6) NOT NULL,
        [via] nvarchar(32) NOT NULL,
        CONSTRAINT [pk_vitals_view] PRIMARY KEY ([id]),
        CONSTRAINT [fk_vitals_view_owner_id] FOREIGN KEY ([owner_id]) REFERENCES [owner] ([id]) ON DELETE NO ACTION
    );
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE INDEX [ix_alert_owner_id_raised_at] ON [alert] ([owner_id], [raised_at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE INDEX [ix_alert_raised_at] ON [alert] ([raised_at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE INDEX [ix_class_staff_user_id] ON [class_staff] ([user_id]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE INDEX [ix_vitals_view_at] ON [vitals_view] ([at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    CREATE INDEX [ix_vitals_view_owner_id_at] ON [vitals_view] ([owner_id], [at]);
END;

IF NOT EXISTS (
    SELECT * FROM [__EFMigrationsHistory]
    WHERE [MigrationId] = N'20261126102426_Dashboard'
)
BEGIN
    INSERT INTO [__EFMigrationsHistory] ([MigrationId], [ProductVersion])
    VALUES (N'20261126102426_Dashboard', N'10.0.15');
END;

COMMIT;
GO


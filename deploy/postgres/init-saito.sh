#!/bin/sh
# Run once by the postgres image's entry point, when it creates the cluster (an empty data folder), as the postgres
# superuser: Saito's role (not a superuser), its database, and the archive tier's tablespace on the slow disk.
# The hot tables stay in the database's default tablespace, in the data folder on the fast disk.
# Later password changes: docs/operations.md ("Rotating credentials").
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v pw="$SAITO_PG_PASSWORD" <<'SQL'
CREATE ROLE saito LOGIN PASSWORD :'pw';
CREATE DATABASE saito OWNER saito;
CREATE TABLESPACE saito_archive OWNER saito LOCATION '/var/lib/postgresql/archive';
SQL

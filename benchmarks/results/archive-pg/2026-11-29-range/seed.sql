DROP DATABASE IF EXISTS exp;
CREATE DATABASE exp;
\c exp
CREATE TABLE hot (device_id integer NOT NULL, channel integer NOT NULL, ts timestamptz NOT NULL, heart_rate double precision, systolic double precision, diastolic double precision, skin_temp double precision, received_at timestamptz NOT NULL, CONSTRAINT hot_pkey PRIMARY KEY (device_id, channel, ts)) TABLESPACE bench_fast;
CREATE TABLE arch (LIKE hot INCLUDING ALL) TABLESPACE bench_disk;
INSERT INTO hot SELECT d, c, '2026-11-01'::timestamptz + s * interval '1 second', 60 + (s % 40), 110, 70, 36.5, '2026-11-01'::timestamptz + s * interval '1 second' FROM generate_series(0, 7812) s, generate_series(1,64) d, generate_series(0,3) c ORDER BY s, d, c;
VACUUM ANALYZE hot;
CHECKPOINT;
SELECT count(*) FROM hot;

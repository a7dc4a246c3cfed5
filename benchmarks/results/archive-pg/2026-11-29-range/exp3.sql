\timing on
SET work_mem='64MB';
BEGIN;
COPY (DELETE FROM hot WHERE (device_id, channel, ts) >= (1, 0, '-infinity') AND (device_id, channel, ts) <= (2, 2, '2026-11-01 00:52:01+00') AND ts < '2026-11-20' RETURNING *) TO '/tmp/b3.bin' (FORMAT binary);
ROLLBACK;
BEGIN;
COPY (DELETE FROM hot WHERE (device_id, channel, ts) >= (1, 0, '-infinity') AND (device_id, channel, ts) <= (2, 2, '2026-11-01 00:52:01+00') AND ts < '2026-11-20' RETURNING *) TO '/tmp/b3.bin' (FORMAT binary);
ROLLBACK;
BEGIN;
COPY (WITH moved AS (DELETE FROM hot WHERE (device_id, channel, ts) >= (1, 0, '-infinity') AND (device_id, channel, ts) <= (2, 2, '2026-11-01 00:52:01+00') AND ts < '2026-11-20' RETURNING *) SELECT * FROM moved ORDER BY device_id, channel, ts) TO '/tmp/b3.bin' (FORMAT binary);
ROLLBACK;
BEGIN;
COPY (WITH moved AS (DELETE FROM hot WHERE ctid = ANY (ARRAY(SELECT ctid FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 ORDER BY device_id, channel, ts LIMIT 50000)) AND ts < '2026-11-20' RETURNING *) SELECT * FROM moved ORDER BY device_id, channel, ts) TO '/tmp/b1.bin' (FORMAT binary);
ROLLBACK;
BEGIN;
COPY (WITH moved AS (DELETE FROM hot WHERE ctid = ANY (ARRAY(SELECT ctid FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 ORDER BY device_id, channel, ts LIMIT 50000)) AND ts < '2026-11-20' RETURNING *) SELECT * FROM moved ORDER BY device_id, channel, ts) TO '/tmp/b1.bin' (FORMAT binary);
ROLLBACK;

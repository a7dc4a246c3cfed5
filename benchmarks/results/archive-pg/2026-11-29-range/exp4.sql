\timing on
SET work_mem='64MB';
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF) WITH b AS MATERIALIZED (SELECT device_id, channel, ts FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 ORDER BY device_id, channel, ts OFFSET 49999 LIMIT 1)
DELETE FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 AND (device_id, channel, ts) <= (COALESCE((SELECT device_id FROM b), 2147483647), COALESCE((SELECT channel FROM b), 2147483647), COALESCE((SELECT ts FROM b), 'infinity')) RETURNING *;
ROLLBACK;
BEGIN;
COPY (WITH b AS MATERIALIZED (SELECT device_id, channel, ts FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 ORDER BY device_id, channel, ts OFFSET 49999 LIMIT 1)
DELETE FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 AND (device_id, channel, ts) <= (COALESCE((SELECT device_id FROM b), 2147483647), COALESCE((SELECT channel FROM b), 2147483647), COALESCE((SELECT ts FROM b), 'infinity')) RETURNING *) TO '/tmp/b4.bin' (FORMAT binary);
ROLLBACK;
BEGIN;
COPY (WITH b AS MATERIALIZED (SELECT device_id, channel, ts FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 ORDER BY device_id, channel, ts OFFSET 49999 LIMIT 1)
DELETE FROM hot WHERE ts < '2026-11-20' AND device_id >= 1 AND (device_id, channel, ts) <= (COALESCE((SELECT device_id FROM b), 2147483647), COALESCE((SELECT channel FROM b), 2147483647), COALESCE((SELECT ts FROM b), 'infinity')) RETURNING *) TO '/tmp/b4.bin' (FORMAT binary);
ROLLBACK;

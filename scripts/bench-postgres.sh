#!/usr/bin/env bash
# Starts a PostgreSQL 15 cluster for the load-test tool's benchmarks: durable (fsync on, synchronous_commit on,
# full_page_writes on, the defaults), loopback only, with the memory and WAL settings a server of this size would
# be given (shared_buffers 2GB, max_wal_size 16GB so that a 16-million-row run is not timed through forced
# checkpoints), and two tablespaces: fast in /dev/shm (standing in for Optane) and disk under /var/tmp.
#
#   scripts/bench-postgres.sh [port]         # default 55450; prints the connection string to use as --pg
#   scripts/bench-postgres.sh stop [port]
#
# Needs the Debian package postgresql-15 (scripts/test.sh installs it) and root (it runs the server as postgres).
set -euo pipefail
pg_bin=/usr/lib/postgresql/15/bin
action=start
if [[ ${1:-} == stop ]]; then action=stop; shift; fi
port=${1:-55450}
root=/var/tmp/saito-bench-pg-$port
fast=/dev/shm/saito-bench-pg-$port
as_postgres() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [[ $action == stop ]]; then
  as_postgres "$pg_bin/pg_ctl" -D "$root/data" -m fast -w stop
  exit 0
fi

[[ -x $pg_bin/initdb ]] || { echo "bench-postgres: $pg_bin/initdb is missing (apt-get install postgresql-15)" >&2; exit 1; }
if [[ ! -d $root/data ]]; then
  install -d -o postgres -g postgres -m 700 "$root" "$root/disk" "$fast"
  as_postgres "$pg_bin/initdb" -D "$root/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-instructions >"$root/initdb.log"
fi
install -d -o postgres -g postgres -m 700 "$fast"
as_postgres "$pg_bin/pg_ctl" -D "$root/data" status >/dev/null 2>&1 ||
  as_postgres "$pg_bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$root -c shared_buffers=2GB -c max_wal_size=16GB -c checkpoint_timeout=30min -c max_connections=200" start >/dev/null
for tier in fast disk; do
  location=$([[ $tier == fast ]] && echo "$fast" || echo "$root/disk")
  exists=$(as_postgres psql -X -qtA -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "SELECT count(*) FROM pg_tablespace WHERE spcname = 'bench_$tier'")
  if [[ $exists == 0 ]]; then
    as_postgres psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE TABLESPACE bench_$tier LOCATION '$location'"
  fi
done
echo "Host=127.0.0.1;Port=$port;Username=postgres   (tablespaces bench_fast in $fast, bench_disk in $root/disk; fsync=on)"

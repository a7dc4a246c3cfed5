#!/usr/bin/env bash
# Runs every Saito test on a Debian 12 machine that has the .NET SDK, Node 20 and npm.
#
#   scripts/test.sh [extra dotnet test arguments, e.g. --filter Category=Fast]
#
# Installs what the tests drive (Mosquitto, its command-line clients, paho-mqtt, openssl, PostgreSQL,
# Chromium for the load-test report's chart PNGs) with apt-get when missing, installs MQTT.js and
# the report's pinned chart.js with npm, starts a throwaway PostgreSQL cluster for the
# storage tests (stopped when the script exits), runs `dotnet test`, and ends with one line:
#   N passed, N failed, N skipped
# Exit code: non-zero when the build fails, a test fails, or no test results were written.
# Safe to run again and again.
#
# Environment:
#   SAITO_TEST_TARGET    what `dotnet test` runs (default Saito.sln), e.g. tests/Saito.Storage.Tests
#   SAITO_TEST_POSTGRES  a PostgreSQL connection string to test against instead of the throwaway
#                        cluster; then SAITO_TEST_PG_TABLESPACES names its test tablespaces
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

results_dir="$repo_root/artifacts/test-results"
clients_dir="$repo_root/tests/clients"
# The chart library the load-test report inlines (package-lock.json pins it).
report_dir="$repo_root/benchmarks/Saito.LoadTest/report"
# libicu72: Saito runs with ICU (Microsoft.Data.SqlClient refuses invariant globalization).
# chromium, fonts-liberation: the load-test report draws its chart PNGs in headless Chromium (with
# --no-install-recommends the fonts Chart.js asks for, Helvetica/Arial, would be missing).
# sqlite3, git: the README first-run test pastes the printed sqlite3 line and copies the repository with git ls-files.
# docker-compose: validates the deploy/ compose files (no container engine runs).
# tzdata: school time zones (the dashboard bench runs its class where it is noon, Etc/GMT±N).
apt_packages=(mosquitto mosquitto-clients libmosquitto-dev gcc make python3-paho-mqtt python3-aiosmtpd openssl postgresql libicu72 tzdata chromium fonts-liberation sqlite3 git docker-compose)
# The throwaway PostgreSQL cluster: Debian's binaries, a data directory made afresh on every run.
pg_bin=/usr/lib/postgresql/15/bin
pg_root=/var/tmp/saito-test-pg
pg_tablespaces=(saito_test_fast saito_test_slow)

step() { printf '\n==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [[ $EUID -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root to run: $* (run as root or install sudo)"
  fi
}

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

install_system_packages() {
  local missing=()
  local pkg
  for pkg in "${apt_packages[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "apt packages present: ${apt_packages[*]}"
    return
  fi

  step "Installing ${missing[*]} with apt-get"
  # Debian's postinst would start a system-wide mosquitto on port 1883 and a PostgreSQL cluster on
  # 5432; the tests start their own. A policy-rc.d that answers 101 tells invoke-rc.d not to start
  # services during this install, and createcluster.conf tells postgresql-common not to create the
  # system cluster at all (dpkg keeps this file as the admin's: --force-confold).
  if ! is_installed postgresql-common && [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    as_root sh -c "mkdir -p /etc/postgresql-common && printf 'create_main_cluster = false\n' > /etc/postgresql-common/createcluster.conf"
  fi
  local policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
    trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  local rc=0
  {
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null
  } || rc=$?
  if trap -p EXIT | grep -q policy-rc.d; then
    as_root rm -f "$policy"
    trap - EXIT
  fi
  [[ $rc -eq 0 ]] || die "apt-get could not install: ${missing[*]}"
}

stop_system_mosquitto() {
  # The tests use free ports of their own, but a system broker on 1883 confuses anyone poking at
  # localhost by hand, so a running mosquitto service is stopped (not disabled) for the run.
  if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; then
    if systemctl is-active --quiet mosquitto 2>/dev/null; then
      step "Stopping the system mosquitto service"
      as_root systemctl stop mosquitto
    fi
  elif [[ -x /etc/init.d/mosquitto ]]; then
    # No systemd (containers): the sysvinit script knows its pid file.
    if /etc/init.d/mosquitto status >/dev/null 2>&1; then
      step "Stopping the system mosquitto service (init.d)"
      as_root /etc/init.d/mosquitto stop >/dev/null || warn "could not stop the system mosquitto"
    fi
  fi
  if command -v ss >/dev/null 2>&1 && ss -H -ltn 'sport = :1883' 2>/dev/null | grep -q .; then
    warn "something still listens on port 1883 (not a mosquitto service we know); the tests do not need that port"
  fi
}

as_postgres() {
  # From / so that the postgres user is not left in a directory it cannot read.
  (cd / && as_root runuser -u postgres -- "$@")
}

stop_test_postgres() {
  if [[ -f $pg_root/data/postmaster.pid ]]; then
    as_postgres "$pg_bin/pg_ctl" -D "$pg_root/data" -m fast -w -t 60 stop >/dev/null ||
      warn "could not stop the test PostgreSQL in $pg_root/data"
  fi
}

free_port() {
  local port
  for ((port = $1; port < $1 + 100; port++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "no free port in $1..$(($1 + 99)) for the test PostgreSQL"
}

start_test_postgres() {
  if [[ -n ${SAITO_TEST_POSTGRES:-} ]]; then
    echo "PostgreSQL from SAITO_TEST_POSTGRES (tablespaces: ${SAITO_TEST_PG_TABLESPACES:-none set})"
    return
  fi
  step "Starting a throwaway PostgreSQL cluster in $pg_root"
  [[ -x $pg_bin/initdb ]] || die "$pg_bin/initdb is missing (Debian package postgresql-15)"
  id postgres >/dev/null 2>&1 || die "no postgres OS user (Debian package postgresql-common creates it)"
  stop_test_postgres # one an earlier run left behind
  as_root rm -rf "$pg_root"
  as_root install -d -o postgres -g postgres -m 700 "$pg_root" "$pg_root/tablespaces"
  as_postgres "$pg_bin/initdb" -D "$pg_root/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    --no-instructions >"$pg_root/initdb.log" 2>&1 || {
    cat "$pg_root/initdb.log" >&2
    die "initdb failed"
  }
  local port attempt started=false
  # Loopback only, trust auth, no durability (fsync off): a throwaway cluster for tests.
  trap stop_test_postgres EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # A port that refuses a connection can still be bound by another socket (a client's outgoing connection from the
  # ephemeral range, which 55432 is in): PostgreSQL then cannot listen. Try the next free port, a few times.
  port=55432
  for attempt in 1 2 3 4 5; do
    port="$(free_port "$port")"
    if as_postgres "$pg_bin/pg_ctl" -D "$pg_root/data" -l "$pg_root/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$pg_root -c fsync=off -c full_page_writes=off" \
      start >/dev/null; then
      started=true
      break
    fi
    warn "the test PostgreSQL could not start on port $port (attempt $attempt); trying another"
    port=$((port + 1))
  done
  $started || {
    cat "$pg_root/server.log" >&2
    die "the test PostgreSQL did not start"
  }
  local tablespace
  for tablespace in "${pg_tablespaces[@]}"; do
    as_root install -d -o postgres -g postgres -m 700 "$pg_root/tablespaces/$tablespace"
    as_postgres psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres \
      -c "CREATE TABLESPACE $tablespace LOCATION '$pg_root/tablespaces/$tablespace'"
  done
  export SAITO_TEST_POSTGRES="Host=127.0.0.1;Port=$port;Username=postgres"
  export SAITO_TEST_PG_TABLESPACES
  SAITO_TEST_PG_TABLESPACES="$(IFS=,; echo "${pg_tablespaces[*]}")"
  echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (tablespaces $SAITO_TEST_PG_TABLESPACES)"
}

install_node_clients() {
  command -v node >/dev/null 2>&1 || die "node is not installed (Node 20 is expected next to the .NET SDK)"
  command -v npm >/dev/null 2>&1 || die "npm is not installed"
  step "Installing MQTT.js in tests/clients (npm)"
  local npm_args=(--no-audit --no-fund --loglevel=error)
  if [[ -f "$clients_dir/package-lock.json" ]]; then
    (cd "$clients_dir" && npm ci "${npm_args[@]}" >/dev/null)
  else
    (cd "$clients_dir" && npm install "${npm_args[@]}" >/dev/null)
  fi
  echo "MQTT.js $(cd "$clients_dir" && node -p "require('mqtt/package.json').version")"
  step "Installing chart.js in benchmarks/Saito.LoadTest/report (npm)"
  (cd "$report_dir" && npm ci "${npm_args[@]}" >/dev/null)
  echo "chart.js $(cd "$report_dir" && node -p "require('./node_modules/chart.js/package.json').version")"
}

command -v dotnet >/dev/null 2>&1 || die "the .NET SDK (dotnet) is not on PATH"
command -v dpkg-query >/dev/null 2>&1 || die "this script expects Debian (dpkg, apt-get)"

step "System packages"
install_system_packages
stop_system_mosquitto
install_node_clients
start_test_postgres

# Where the tests find their external programs (see tests/Saito.Testing/ExternalClients).
export SAITO_TEST_PYTHON="${SAITO_TEST_PYTHON:-/usr/bin/python3}"
export SAITO_TEST_CLIENTS_DIR="${SAITO_TEST_CLIENTS_DIR:-$clients_dir}"
export SAITO_TEST_NODE="${SAITO_TEST_NODE:-$(command -v node)}"
export SAITO_TEST_MOSQUITTO="${SAITO_TEST_MOSQUITTO:-/usr/sbin/mosquitto}"
export SAITO_TEST_MOSQUITTO_PUB="${SAITO_TEST_MOSQUITTO_PUB:-/usr/bin/mosquitto_pub}"
export SAITO_TEST_MOSQUITTO_SUB="${SAITO_TEST_MOSQUITTO_SUB:-/usr/bin/mosquitto_sub}"
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

"$SAITO_TEST_PYTHON" -c 'import paho.mqtt' 2>/dev/null ||
  die "$SAITO_TEST_PYTHON cannot import paho.mqtt (python3-paho-mqtt); set SAITO_TEST_PYTHON to Debian's /usr/bin/python3"

test_target="${SAITO_TEST_TARGET:-Saito.sln}"
rm -rf "$results_dir"
mkdir -p "$results_dir"
test_rc=0
# Build first, then test without building: MSBuild then runs two test assemblies at a time (one per core) instead
# of one after the other behind each project's build, which keeps the suite's wall time down.
step "dotnet build $test_target -c Release"
dotnet build "$test_target" -c Release -nologo -clp:ErrorsOnly || {
  warn "the build failed: no test ran"
  echo "0 passed, 1 failed"
  exit 1
}
step "dotnet test $test_target -c Release --no-build"
dotnet test "$test_target" -c Release --no-build \
  --results-directory "$results_dir" \
  --logger "trx;LogFilePrefix=saito" \
  --logger "console;verbosity=minimal" \
  --blame-hang-timeout 15m \
  "$@" || test_rc=$?

# A link into the docs that no longer resolves (a moved file, a renamed heading) fails the run like a test (checked before the
# results, so the summary line stays the last line of the output).
step "Links in README.md, docs/ and benchmarks/"
links_rc=0
/usr/bin/python3 "$repo_root/scripts/check-doc-links.py" || links_rc=$?

step "Results ($results_dir)"
summary_rc=0
/usr/bin/python3 "$repo_root/scripts/trx_summary.py" "$results_dir" || summary_rc=$?
if [[ $test_rc -ne 0 || $summary_rc -ne 0 || $links_rc -ne 0 ]]; then
  exit 1
fi

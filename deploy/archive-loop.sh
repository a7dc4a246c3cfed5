#!/bin/sh
# The archiver on a timer, for the compose files: runs `saito-archiver run "$@"` now, then every
# SAITO_ARCHIVE_EVERY_SECONDS (default 86400, a day). Exit codes (docs/archiver.md): 0 moved rows, 3 nothing to do;
# 1 a batch failed or another run holds the lock (the next run resumes it), logged and tried again next time;
# 2 bad arguments or configuration: nothing will work until it is fixed, so the loop ends with that code (the
# compose files' restart policy starts it again with growing delays; each start logs the same message).
set -u
every="${SAITO_ARCHIVE_EVERY_SECONDS:-86400}"
while :; do
  dotnet /app/Saito.Archiver.dll run "$@"
  rc=$?
  case "$rc" in
    0 | 3) ;;
    2) echo "saito-archiver: bad arguments or configuration (exit 2); stopping" >&2; exit 2 ;;
    *) echo "saito-archiver exited $rc; trying again in ${every}s" >&2 ;;
  esac
  sleep "$every"
done

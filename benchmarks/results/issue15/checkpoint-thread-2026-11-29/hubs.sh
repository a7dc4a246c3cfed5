#!/usr/bin/env bash
# 16 hubs x 100 on SQLite, Saito alone: srv-base (WalAutoCheckpointPages 20,000) against srv-new (100,000), alternating.
# Usage: hubs.sh OUT ROUNDS   (from the repository root)
set -u
out=${1:-/tmp/ckhubs}; rounds=${2:-2}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do for s in base new; do
  echo "== $s $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> "$out/runs.log"
  timeout 300 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset hubs \
    --warmup 10 --duration 30 --server /tmp/srv-$s/Saito.Server.dll --out "$out/$s-$r" > "$out/$s-$r.log" 2>&1
  echo "$(grep -a 'committed readings/s' "$out/$s-$r.log" | head -1 | tr -s ' ' | cut -c1-70) $(grep -a 'CPU µs per reading' "$out/$s-$r.log" | tr -s ' ' | cut -c60-100) $(grep -ac 'every acknowledged\|stored' "$out/$s-$r.log")" >> "$out/runs.log"
done; done
echo finished >> "$out/runs.log"

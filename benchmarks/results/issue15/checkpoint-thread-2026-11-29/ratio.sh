#!/usr/bin/env bash
# 320 x 1 on SQLite against Mosquitto: the server with WalAutoCheckpointPages 20,000 (srv-base, 2256c98) and 100,000
# (srv-new, this change), alternating. Usage: [ARMS="new"] ratio.sh OUT ROUNDS   (from the repository root)
set -u
out=${1:-/tmp/ckratio}; rounds=${2:-2}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do for s in ${ARMS:-base new}; do
  echo "== $s $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> "$out/runs.log"
  timeout 600 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw \
    --against-mosquitto --warmup 30 --duration 30 --server /tmp/srv-$s/Saito.Server.dll --out "$out/$s-$r" > "$out/$s-$r.log" 2>&1
  grep -a 'committed readings/s\|accepted\|ratio\|CPU µs per reading' "$out/$s-$r.log" | tr -s ' ' | cut -c1-120 >> "$out/runs.log"
done; done
echo finished >> "$out/runs.log"

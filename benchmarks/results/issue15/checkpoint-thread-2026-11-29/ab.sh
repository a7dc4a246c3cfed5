#!/usr/bin/env bash
# Saito alone, 320 x 1 on SQLite: the server before (srv-base, 2256c98) and after (srv-ck, the checkpoint thread), alternating.
# Usage: ab.sh OUT ROUNDS   (run from the repository root; both servers published with
#   dotnet publish src/Saito.Server -c Release -p:PublishReadyToRun=true -o /tmp/srv-base|/tmp/srv-ck)
set -u
out=${1:-/tmp/ckab}; rounds=${2:-3}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do for s in base ck; do
  echo "== $s $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> "$out/runs.log"
  timeout 300 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw \
    --warmup 20 --duration 20 --server /tmp/srv-$s/Saito.Server.dll --out "$out/$s-$r" > "$out/$s-$r.log" 2>&1
  echo "$(grep -a 'committed readings/s' "$out/$s-$r.log" | head -1 | tr -s ' ' | cut -c1-70) $(grep -a 'CPU µs per reading' "$out/$s-$r.log" | tr -s ' ' | cut -c60-100)" >> "$out/runs.log"
done; done
echo finished >> "$out/runs.log"

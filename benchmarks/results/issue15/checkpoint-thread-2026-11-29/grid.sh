#!/usr/bin/env bash
# Saito alone, 320 x 1 on SQLite: server (base = 2256c98, ck = the checkpoint thread) x Storage:Sqlite:WalAutoCheckpointPages.
# Usage: grid.sh OUT ROUNDS "server:pages ..."   (from the repository root)
set -u
out=${1:-/tmp/ckgrid}; rounds=${2:-2}; arms=${3:-"base:20000 base:60000 ck:60000 base:200000 ck:200000"}
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do for arm in $arms; do
  s=${arm%%:*}; p=${arm##*:}; name=$s-$p-$r
  echo "== $s $p $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> "$out/runs.log"
  timeout 300 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw \
    --warmup 20 --duration 20 --server /tmp/srv-$s/Saito.Server.dll --server-arg Storage:Sqlite:WalAutoCheckpointPages=$p \
    --out "$out/$name" > "$out/$name.log" 2>&1
  echo "$(grep -a 'committed readings/s' "$out/$name.log" | head -1 | tr -s ' ' | cut -c1-70) $(grep -a 'CPU µs per reading' "$out/$name.log" | tr -s ' ' | cut -c60-100)" >> "$out/runs.log"
done; done
echo finished >> "$out/runs.log"

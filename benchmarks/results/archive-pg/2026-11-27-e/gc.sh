#!/bin/bash
# usage: gc.sh ROUNDS   (from a checkout of 2cfbc0e built with `dotnet build -c Release`, PostgreSQL from scripts/bench-postgres.sh)
# Four archiver workers, 2,000,128 rows: the load tool's server GC (its project default) and workstation GC
# (DOTNET_gcServer=0, as saito-archiver runs), alternating.
out=${OUT:-/tmp/archive-gc}; mkdir -p "$out"
summary() { grep -a '│ saito \|│ set-based' "$1" | awk -F'│' '{printf "%s|%s|%s  ", $6, $7, $10}'; }
for r in $(seq 1 "${1:-3}"); do
  for arm in server ws; do
    extra=""; [ "$arm" = ws ] && extra="DOTNET_gcServer=0"
    env $extra DOTNET_TieredPGO=0 DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll archive \
      --db postgres --pg "Host=127.0.0.1;Port=55450;Username=postgres" --rows 2000000 --threads 4 \
      --tier fast=@bench_fast --archive-tier disk=@bench_disk --out "$out/$arm$r" > "$out/gc-$arm$r.log" 2>&1
    echo "$arm$r :: $(summary "$out/gc-$arm$r.log")"
  done
done

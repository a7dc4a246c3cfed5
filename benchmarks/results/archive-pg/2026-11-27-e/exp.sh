#!/bin/bash
# usage: exp.sh NAME [VAR=VALUE ...]   (from a checkout of 2cfbc0e with server-side-move.patch applied, built with
# `dotnet build benchmarks/Saito.LoadTest -c Release`; PostgreSQL from scripts/bench-postgres.sh)
# SAITO_EXP_SERVERCSV=1 SAITO_EXP_RANGE=1 is the patched move; without them the committed one (the patch is off).
name=$1; shift
out=${OUT:-/tmp/archive-exp}; mkdir -p "$out"
summary() { grep -a '│ saito \|│ set-based' "$1" | awk -F'│' '{printf "%s|%s|%s|%s  ", $6, $7, $10, $11}'; }
env "$@" DOTNET_TieredPGO=0 DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll archive \
  --db postgres --pg "Host=127.0.0.1;Port=55450;Username=postgres" --rows 2000000 --threads 4 \
  --tier fast=@bench_fast --archive-tier disk=@bench_disk --out "$out/$name" > "$out/$name.log" 2>&1
echo "$name $* :: $(summary "$out/$name.log")"

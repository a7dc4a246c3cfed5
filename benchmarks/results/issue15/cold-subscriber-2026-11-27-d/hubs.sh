#!/bin/bash
# usage: hubs.sh NAME TREE: 16 hubs x 100 readings per message, SQLite, 10 s warm-up, 30 s measured
name=$1; tree=$2; shift 2
dotnet $tree/benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset hubs --warmup 10 --duration 30 --out /work/bench23/$name "$@" > /work/bench23/$name.log 2>&1
echo "$name $tree rc=$?: $(sed 's/\x1b\[[0-9;]*m//g' /work/bench23/$name.log | grep -E "committed readings/s" | head -1)"

#!/bin/bash
# usage: prof4.sh NAME ; perf of the load tool's process only during saito's 4-worker move (6M rows)
name=$1; shift
cd /work/main
DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0 DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0 DOTNET_TieredPGO=0 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll archive --db postgres --pg "Host=127.0.0.1;Port=55450;Username=postgres" --rows 6000000 --threads 4 --methods saito --tier fast=@bench_fast --archive-tier disk=@bench_disk "$@" > /work/bench24/$name.log 2>&1 &
pid=$!
until grep -aq "saito, 4 thread(s)" /work/bench24/$name.log; do sleep 0.1; done
sleep 1
perf record -F 1999 -g -p $(pgrep -f "Saito.LoadTest.dll archive" | head -1) -o /work/bench24/$name.perf -- sleep 5 2>/dev/null
wait $pid

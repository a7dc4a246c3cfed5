#!/bin/bash
# perf map growth of a fresh server after its MQTT port opens, no load
name=$1; dll=$2; shift 2
port=$((30000 + RANDOM % 20000)); http=$((port+1))
rm -rf /tmp/saito-cold; rm -f /tmp/perf-*.map
start=$(date +%s.%N)
env DOTNET_PerfMapEnabled=1 "$@" dotnet $dll --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 \
  --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
for i in $(seq 1 400); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
open=$(date +%s.%N)
spid=$(pgrep -f "Saito.Server.dll --urls=http://127.0.0.1:$http")
map=/tmp/perf-$spid.map
echo "port open after $(echo "$open - $start" | bc) s"
cp $map /work/bench23/$name.open
for t in 1 2 3 4 5 6 7 8 9 10; do sleep 0.5; echo "open+$(echo "$t*0.5" | bc) s: $(wc -l < $map) lines, cpu $(ps -o times= -p $spid) s"; done
cp $map /work/bench23/$name.idle
kill $spid; wait 2>/dev/null

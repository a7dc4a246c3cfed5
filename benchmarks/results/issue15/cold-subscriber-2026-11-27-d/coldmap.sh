#!/bin/bash
# usage: coldmap.sh NAME DLL [ENV=v ...]: perf map line counts of a fresh server before and during the cold 128k msg/s load
name=$1; dll=$2; shift 2
port=$((30000 + RANDOM % 20000)); http=$((port+1))
rm -rf /tmp/saito-cold; rm -f /tmp/perf-*.map
env DOTNET_PerfMapEnabled=1 "$@" dotnet $dll --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 \
  --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
spid=$(pgrep -f "Saito.Server.dll --urls=http://127.0.0.1:$http")
map=/tmp/perf-$spid.map
sleep ${IDLE:-3}
echo "idle after start: $(wc -l < $map)"
cp $map /work/bench23/$name.map0
(dotnet /tmp/loadtest-r2r/Saito.LoadTest.dll broker --target saito --endpoint 127.0.0.1:$port --publishers 16 --messages 120000 --rate 128000 2>&1 | grep -a "saito " > /work/bench23/$name.txt) &
lpid=$!
for t in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1; echo "t+$t s: $(wc -l < $map)"; cp $map /work/bench23/$name.map$t; done
wait $lpid
curl -s http://127.0.0.1:$http/metrics | grep -E "^saito_mqtt_messages_dropped_total|^dotnet_jit_compiled_methods" > /work/bench23/$name.metrics
kill $spid; wait 2>/dev/null
cat /work/bench23/$name.txt | cut -c1-170; cat /work/bench23/$name.metrics

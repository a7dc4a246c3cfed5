# usage: [WAIT=seconds|quiet] [ROUNDS=n] coldab.sh NAME=DLL ...: a fresh server per run (fresh data folder), 16 x 120,000
# at 128,000 msg/s from the load tool; arms alternate. The load starts as soon as the MQTT port opens (WAIT=0, the
# default), WAIT seconds later, or (WAIT=quiet) once the server's CPU is quiet (under 2 ticks per 100 ms).
rounds=${ROUNDS:-5}
for r in $(seq 1 $rounds); do for arm in "$@"; do
  name=${arm%%=*}; dll=${arm#*=}
  port=$((30000 + RANDOM % 20000)); http=$((port+1))
  rm -rf /tmp/saito-cold
  dotnet "$dll" --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 \
    --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
  spid=$!
  for i in $(seq 1 400); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
  t0=$(date +%s%N)
  if [ "${WAIT:-0}" = quiet ]; then
    pid=$(pgrep -f "Saito.Server.dll --urls=http://127.0.0.1:$http"); prev=$(awk '{print $14+$15}' /proc/$pid/stat)
    while sleep 0.1; do c=$(awk '{print $14+$15}' /proc/$pid/stat); [ $((c-prev)) -lt 2 ] && break; prev=$c; done
  else
    sleep ${WAIT:-0}
  fi
  echo "== $name round $r waited $(( ($(date +%s%N)-t0)/1000000 )) ms $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet ${TOOL:-/tmp/loadtest-r2r/Saito.LoadTest.dll} broker --target saito --endpoint 127.0.0.1:$port --publishers 16 --messages 120000 --rate 128000 2>&1 | grep -a "saito " | cut -c1-150
  kill $spid; wait $spid 2>/dev/null
done; done

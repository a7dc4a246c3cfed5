# usage: [SERVER=dll] [MSGS=per publisher] [RATE=msg/s] ROUNDS=n coldenv.sh NAME=ENVSPEC ... (ENVSPEC: comma-separated K=V, or "none"); server /tmp/saito-r2r-q50 unless SERVER
rounds=${ROUNDS:-4}
for r in $(seq 1 $rounds); do for arm in "$@"; do
  name=${arm%%=*}; spec=${arm#*=}; envs=""; [ "$spec" != none ] && envs=$(echo "$spec" | tr ',' ' ')
  port=$((30000 + RANDOM % 20000)); http=$((port+1))
  rm -rf /tmp/saito-cold
  env $envs dotnet ${SERVER:-/tmp/saito-r2r-q50/Saito.Server.dll} --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 \
    --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
  spid=$!
  for i in $(seq 1 400); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
  echo "== $name round $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet /tmp/loadtest-r2r/Saito.LoadTest.dll broker --target saito --endpoint 127.0.0.1:$port --publishers 16 --messages ${MSGS:-120000} --rate ${RATE:-128000} 2>&1 | grep -a "saito " | cut -c1-150
  kill $spid; wait $spid 2>/dev/null
done; done

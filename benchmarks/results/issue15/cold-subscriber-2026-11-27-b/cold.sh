# arms: "ENV1=v,ENV2=v@DLL" (env part may be "none")
rate=$1; msgs=$2; shift 2
for r in 1 2 3; do for arm in "$@"; do
  envs=${arm%@*}; dll=${arm##*@}
  port=$((30000 + RANDOM % 20000)); http=$((port+1))
  rm -rf /tmp/saito-cold
  envargs=""; [ "$envs" != none ] && envargs=$(echo $envs | tr ',' ' ')
  env $envargs dotnet "$dll" --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 \
    --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
  spid=$!
  for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  echo "== $envs round $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet ${TOOL:-/work/main/benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll} broker --target saito --endpoint 127.0.0.1:$port --publishers 16 --messages $msgs --rate $rate 2>&1 | grep -a "saito "
  kill $spid; wait $spid 2>/dev/null
done; done

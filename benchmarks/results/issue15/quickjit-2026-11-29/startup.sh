# usage: startup.sh DLL ENVSPEC rounds : ms from launch to HTTP /health answering
dll=$1; spec=$2; envs=""; [ "$spec" != none ] && envs=$(echo "$spec" | tr ',' ' ')
for r in $(seq 1 ${3:-3}); do
  port=$((30000 + RANDOM % 20000)); http=$((port+1)); rm -rf /tmp/saito-su
  t0=$(date +%s%N)
  env $envs dotnet $dll --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-su/hot --Storage:ArchivePath=/tmp/saito-su/archive > /tmp/saito-su.log 2>&1 &
  pid=$!
  for i in $(seq 1 600); do code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$http/health 2>/dev/null); [ "$code" != 000 ] && break; sleep 0.02; done
  t1=$(date +%s%N); echo "$spec $(( (t1-t0)/1000000 )) ms (health $code)"
  kill $pid; wait $pid 2>/dev/null
done

# Cold subscriber runs (benchmarks/results/HISTORY.md): a fresh Saito.Server per run, driven by the broker command with --endpoint.
#   bash cold-subscriber.sh RATE MESSAGES_PER_PUBLISHER SERVER_DLL:MAX_QUEUED [SERVER_DLL:MAX_QUEUED ...]
# e.g. bash cold-subscriber.sh 128000 120000 src/Saito.Server/bin/Release/net10.0/Saito.Server.dll:10000 /tmp/saito-r2r/Saito.Server.dll:10000
# (run from the repository root; /tmp/saito-r2r from dotnet publish src/Saito.Server -c Release -p:PublishReadyToRun=true -o /tmp/saito-r2r)
rate=$1; msgs=$2; shift 2
for r in 1 2 3; do for arm in "$@"; do
  dll=${arm%:*}; q=${arm##*:}
  port=$((30000 + RANDOM % 20000)); http=$((port+1))
  rm -rf /tmp/saito-cold
  dotnet "$dll" --urls=http://127.0.0.1:$http --Mqtt:BindAddress=127.0.0.1 --Mqtt:Port=$port --Mqtt:MaxInflightMessages=32 --Mqtt:MaxQueuedMessages=$q \
    --Logging:LogLevel:Default=Warning --Storage:HotPath=/tmp/saito-cold/hot --Storage:ArchivePath=/tmp/saito-cold/archive > /tmp/saito-cold.log 2>&1 &
  spid=$!
  for i in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done
  echo "== $dll q=$q round $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll broker --target saito --endpoint 127.0.0.1:$port --publishers 16 --messages $msgs --rate $rate 2>&1 | grep -a "saito "
  kill $spid; wait $spid 2>/dev/null
done; done

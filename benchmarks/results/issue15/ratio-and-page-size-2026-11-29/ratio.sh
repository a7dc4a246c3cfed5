cd /work/main
for r in 1 2; do
  for db in sqlite postgres; do
    extra=""; [ $db = postgres ] && extra='--db postgres --pg Host=127.0.0.1;Port=55450;Username=postgres'
    echo "== $db $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> /tmp/ratio/runs.log
    timeout 600 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw --against-mosquitto --warmup 30 --duration 30 $extra --server /tmp/srv-b/Saito.Server.dll --out /tmp/ratio/$db-$r > /tmp/ratio/$db-$r.log 2>&1
  done
done
echo finished >> /tmp/ratio/runs.log

T="dotnet /work/main/benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll"
cd /work/main
for r in 1 2; do for wt in wt-base main; do
  for db in postgres sqlite; do
    out=/work/bench19/wab-$db-$wt-$r
    extra=""; [ $db = postgres ] && extra="--db postgres --pg Host=127.0.0.1;Port=56432;Username=postgres"
    echo "== 320x1 $db $wt $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
    $T ingest --preset sensors --generator c --inflight 20 --warmup 20 --duration 20 $extra --server /work/$wt/src/Saito.Server/bin/Release/net10.0/Saito.Server.dll --out $out > $out.log 2>&1
    grep -aE "committed readings/s|CPU µs|every acknowledged|Every acknowledged" $out.log | sed 's/\x1b\[[0-9;]*m//g'
  done
  out=/work/bench19/wab-hubs-$wt-$r
  echo "== 16 hubs sqlite $wt $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  $T ingest --preset hubs --warmup 10 --duration 20 --server /work/$wt/src/Saito.Server/bin/Release/net10.0/Saito.Server.dll --out $out > $out.log 2>&1
  grep -aE "committed readings/s|CPU µs|Every acknowledged" $out.log | sed 's/\x1b\[[0-9;]*m//g'
done; done

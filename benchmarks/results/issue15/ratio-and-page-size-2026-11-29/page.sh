cd /work/main
for r in 3; do for p in 8192 4096 16384; do
  echo "== page $p $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> /tmp/page/runs.log
  timeout 300 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw --warmup 20 --duration 20 --server /tmp/srv-exp/Saito.Server.dll --server-env SAITO_EXP_PAGE=$p --out /tmp/page/p$p-$r > /tmp/page/p$p-$r.log 2>&1
  echo "$(grep -a 'committed readings/s' /tmp/page/p$p-$r.log | head -1 | tr -s ' ' | cut -c1-70) $(grep -a 'CPU µs per reading' /tmp/page/p$p-$r.log | tr -s ' ' | cut -c60-100)" >> /tmp/page/runs.log
done; done
echo finished >> /tmp/page/runs.log

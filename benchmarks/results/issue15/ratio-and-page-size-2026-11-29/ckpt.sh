cd /work/main
for r in 1 2; do for p in 20000 200000; do
  echo "== wal_autocheckpoint $p $r $(date -u +%T) $(uptime | sed 's/.*load/load/')" >> /tmp/ckpt/runs.log
  timeout 300 dotnet benchmarks/Saito.LoadTest/bin/Release/net10.0/Saito.LoadTest.dll ingest --preset sensors --generator raw --warmup 20 --duration 20 --server /tmp/srv-b/Saito.Server.dll --server-arg Storage:Sqlite:WalAutoCheckpointPages=$p --out /tmp/ckpt/c$p-$r > /tmp/ckpt/c$p-$r.log 2>&1
  echo "$(grep -a 'committed readings/s' /tmp/ckpt/c$p-$r.log | head -1 | tr -s ' ' | cut -c1-70) $(grep -a 'CPU µs per reading' /tmp/ckpt/c$p-$r.log | tr -s ' ' | cut -c60-100)" >> /tmp/ckpt/runs.log
done; done
echo finished >> /tmp/ckpt/runs.log

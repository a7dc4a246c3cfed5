for r in 1 2 3; do for arm in old head; do
  echo "== $arm round $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet /tmp/loadtest-r2r/Saito.LoadTest.dll ingest --preset hubs --duration 30 --warmup 10 --server /tmp/saito-r2r-$arm/Saito.Server.dll --out /tmp/hubs-ab/$arm$r 2>&1 | grep -a -iE "committed|readings/s" | tail -3 | cut -c1-200
done; done

# 16 hubs x 100 readings on SQLite, the tree before hub sites (437f8d6, same ingestion as e742011) and after (193aa70),
# both published ReadyToRun, alternating; results.json of each run gives hubs-ab.txt.
for r in 1 2 3; do for arm in before:/tmp/saito-r2r-head after:/tmp/saito-r2r-sites; do n=${arm%%:*}; d=${arm#*:}
  dotnet /tmp/loadtest-r2r/Saito.LoadTest.dll ingest --preset hubs --duration 30 --warmup 10 --server $d/Saito.Server.dll --out /tmp/hubs-ab2/$n$r
done; done

# usage: ROUNDS=n ROWS=n THREADS=1,4 archab.sh NAME=TOOLDIR ...  (alternating; PGO off and no spinning, as saito-archiver runs)
export DOTNET_TieredPGO=0 DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0
for r in $(seq 1 ${ROUNDS:-3}); do for arm in "$@"; do
  name=${arm%%=*}; dir=${arm#*=}
  echo "== $name round $r $(date -u +%T) $(uptime | sed 's/.*load/load/')"
  dotnet $dir/Saito.LoadTest.dll archive --db postgres --pg "Host=127.0.0.1;Port=55450;Username=postgres" --rows ${ROWS:-2000000} \
    --threads ${THREADS:-1,4} --tier fast=@bench_fast --archive-tier disk=@bench_disk --out ${OUT:-/tmp/archab}/$name-$r 2>&1 | grep -aE "│ (saito|set-b)" | cut -c1-150
done; done

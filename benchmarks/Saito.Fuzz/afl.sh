#!/usr/bin/env bash
# Coverage-guided fuzzing of one Saito.Fuzz target with afl-fuzz (AFL++) and SharpFuzz.
#   benchmarks/Saito.Fuzz/afl.sh TARGET SECONDS CRASH_DIR [WORK_DIR]
# TARGET is mqtt-packet, saito-json or senml. Needs afl-fuzz (Debian: apt-get install afl++) and the .NET SDK.
# It publishes Saito.Fuzz to WORK_DIR/bin, instruments Saito.Mqtt.dll and Saito.Ingestion.dll there with the
# sharpfuzz tool (SharpFuzz.CommandLine, installed into WORK_DIR/tools), writes the target's seeds with an
# uninstrumented build, runs afl-fuzz for SECONDS, and copies what afl-fuzz saved as crashes or hangs to CRASH_DIR.
# WORK_DIR (default /tmp/saito-afl-TARGET) keeps afl-fuzz's queue: run again with the same one to resume from it.
set -euo pipefail

target=${1:?target: mqtt-packet, saito-json or senml}
seconds=${2:?seconds}
crashes=$(realpath -m "${3:?crash folder}")
work=$(realpath -m "${4:-/tmp/saito-afl-$target}")
here=$(cd "$(dirname "$0")" && pwd)
sharpfuzz_version=2.3.0

command -v afl-fuzz >/dev/null || { echo "afl-fuzz not found: apt-get install afl++" >&2; exit 2; }
mkdir -p "$work" "$crashes"

if [ ! -x "$work/tools/sharpfuzz" ]; then
  dotnet tool install --tool-path "$work/tools" SharpFuzz.CommandLine --version "$sharpfuzz_version" >/dev/null
fi

# Seeds come from the ordinary build: instrumented code only runs inside afl-fuzz.
dotnet build "$here" -c Release --nologo -v quiet >/dev/null
if [ ! -d "$work/out/default/queue" ]; then
  rm -rf "$work/seeds"
  dotnet "$here/bin/Release/net10.0/Saito.Fuzz.dll" "$target" --write-seeds "$work/seeds"
  input="$work/seeds"
else
  input=-   # resume
fi

rm -rf "$work/bin"
dotnet publish "$here" -c Release --nologo -v quiet -o "$work/bin" >/dev/null
for assembly in Saito.Mqtt Saito.Ingestion; do
  "$work/tools/sharpfuzz" "$work/bin/$assembly.dll" >/dev/null
done

# AFL_SKIP_BIN_CHECK: the program afl-fuzz starts is dotnet, not an afl-instrumented binary (SharpFuzz reports
# coverage through afl's shared memory itself). -t: the first inputs pay for the JIT. -m none: .NET reserves a
# lot of virtual memory. -V: stop after SECONDS.
AFL_SKIP_BIN_CHECK=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1 \
  afl-fuzz -i "$input" -o "$work/out" -t 5000 -m none -V "$seconds" -- \
  dotnet "$work/bin/Saito.Fuzz.dll" "$target" --afl > "$work/afl-fuzz.log" 2>&1 || { tail -30 "$work/afl-fuzz.log" >&2; exit 1; }

found=0
for kind in crashes hangs; do
  for file in "$work/out/default/$kind"/id:*; do
    [ -e "$file" ] || continue
    cp "$file" "$crashes/afl-$kind-$(sha256sum "$file" | cut -c1-12).bin"
    found=$((found + 1))
  done
done

stats="$work/out/default/fuzzer_stats"
echo "[$target] afl-fuzz: $(awk -F' *: ' '/^run_time/{t=$2} /^execs_done/{e=$2} /^execs_per_sec/{s=$2} /^corpus_count/{c=$2} /^bitmap_cvg/{b=$2} END{printf "%s execs in %s s (%s/s), corpus %s, coverage map %s", e, t, s, c, b}' "$stats"), crashes and hangs copied to $crashes: $found"
[ "$found" -eq 0 ]

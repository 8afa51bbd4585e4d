#!/usr/bin/env bash
# fleet_ranks.sh: a multi-process job in miniature. N ranks run at once, each one process of
# examples/rank_report.c writing its report labelled rank=I; rank SLOW gets a batch 8 times
# larger (the rank whose shard is larger). `layerprof merge` then ranks the modules by skew
# (max/median across the ranks) and names the rank that held each max.
#
#   fleet_ranks.sh RANK_REPORT LAYERPROF MODEL.pt OUTDIR [N=4] [SLOW=2] [SHAPE=1x3x64x64]
#
# --force: the straggler ran with other inputs, which merge refuses unless told; its note says
# which options differ. LP_FLEET_SERIAL=1 runs the ranks one after the other: on a machine with
# fewer cores than ranks, a rank descheduled mid-call shows a small module's call up to 100 times
# slower, noise the test (tests/integration/test_merge.sh) keeps out this way.
set -euo pipefail
rank_report=$1 layerprof=$2 model=$3 outdir=$4
n=${5:-4} slow=${6:-2} shape=${7:-1x3x64x64}
batch=${shape%%x*} rest=${shape#*x}
mkdir -p "$outdir"
pids=()
for ((i = 0; i < n; i++)); do
  b=$batch
  [ "$i" -eq "$slow" ] && b=$((batch * 8))
  "$rank_report" "$model" "$i" "${b}x${rest}:float32" "$outdir/rank$i.json" &
  pids+=($!)
  if [ "${LP_FLEET_SERIAL:-0}" = 1 ]; then wait "$!"; fi
done
for p in "${pids[@]}"; do wait "$p"; done
reports=()
for ((i = 0; i < n; i++)); do reports+=("$outdir/rank$i.json"); done
"$layerprof" merge --force --top 5 --columns total_median,total_max,skew,total_source "${reports[@]}"

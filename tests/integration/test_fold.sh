#!/usr/bin/env bash
# test_fold.sh: the folding rule's properties (check_fold.c) on real models' reports.
#
#     test_fold.sh LAYERPROF CHECK_FOLD MODELS_DIR [PT2_DIR]
#
# Profiles resnet18 and the transformer encoder of models/ (and, on a libtorch 2.x build, the
# resnet18 AOTInductor package the pt2 tests exported) with every additive column recorded: CPU
# time, memory, FLOPs, parameters and op rows; once whole and once with paths selected, so that
# rows standing in for modules measured below them are folded too. check_fold then folds each
# report at every depth and checks that every figure still adds up.
set -eu
if [ $# -lt 3 ]; then
  echo "usage: $0 LAYERPROF CHECK_FOLD MODELS_DIR [PT2_DIR]" >&2
  exit 2
fi
LP=$1 CHECK=$2 MODELS=$3 PT2=${4:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lp_fold.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
COLS=self_cpu,cpu_total,self_cpu_mem,cpu_mem,peak_cpu_mem,calls,self_flops,flops,self_params,params
run() { # NAME MODEL ARGS...
  local name=$1 model=$2
  shift 2
  "$LP" "$model" --warmup 1 --iterations 2 --memory --events --columns "$COLS" "$@" \
    --format json --output "$TMP/$name.json" >/dev/null
}
run resnet18 "$MODELS/resnet18.pt"
run resnet18_paths "$MODELS/resnet18.pt" --path layer4 --path layer1.0.conv1 --path fc
run transformer "$MODELS/transformer.pt"
run transformer_paths "$MODELS/transformer.pt" --path embed --path encoder.layers.0
reports=("$TMP"/*.json)
if [ -n "$PT2" ]; then
  run resnet18_pt2 "$PT2/resnet18.pt2"
  reports+=("$TMP/resnet18_pt2.json")
fi
"$CHECK" "${reports[@]}"

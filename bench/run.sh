#!/usr/bin/env bash
# bench/run.sh: layerprof's benchmarks in one command. See bench/README.md for what each number
# means.
#
#   bench/run.sh [--quick | --smoke] [--build DIR] [--no-build] [--clock cpu|wall] [--models a,b,...]
#                [--region-models a,b,...] [--packages a,b,...] [--only sampling | --skip sampling]
#
#   (default)  the full run: 20 minutes on 2 cores for resnet18, mobilenet_v2, lstm_cell,
#              pat_loops and nested without the sampling section (2026-11-28; the CNNs' 40
#              rounds are most of it), 3 more for the packages with libtorch 2.x (and 4 the
#              first time, exporting them)
#   --quick    fewer repetitions, no [shim-only] row, smaller trees: ~85 s, wider intervals
#   --smoke    tiny repetition counts: proves the harness works (ctest bench.smoke); the numbers
#              mean nothing
#   --build    the CMake build directory (default: $LP_BUILD_DIR, else build-bench/ in the repo)
#   --no-build use the binaries already in --build (ctest does)
#   --clock    cpu (default: each forward's thread CPU time, robust to a busy machine) or wall
#   --models   the models to run (default: alexnet,resnet18,mobilenet_v2,transformer,lstm_cell,
#              nested), from $LP_MODELS_DIR (default: models/ in the repo); NAME=SPEC;SPEC gives
#              the inputs of a model that records none (as the CLI's --input), or a model path
#              (a .pt2 path: an AOTInductor package, against itself unprofiled)
#   --region-models  the models of the regions benchmark (default: nested,resnet18; the micro part
#              opens a session on the first)
#   --packages a,b,...  the AOTInductor packages of the overhead section, with libtorch 2.x only
#              (default: efficientnet_b0,shufflenet_v2_x1_0,mobilenet_v3_small,resnet50, CNNs of
#              hundreds of small kernels and one of large ones; --quick, --smoke: none): NAME.pt2 from
#              $LP_MODELS_DIR, else exported once (random weights, 1x3x224x224) into
#              BUILD/bench/pt2/ with the torchvision model of that name, by $LP_PT2_PYTHON
#              (default: .deps/torch2/bin/python, the wheel's venv scripts/setup.sh makes);
#              "" for none
#   --only sampling  run only the sampling section (a live session's stream of forwards at 1/100
#              and 1/10, an unsampled forward's cost, the exposition's render time for resnet50)
#   --skip sampling  everything but that section (its blocks are counted in forwards, so on the
#              CNNs, 40-110 ms a forward, the full run's section alone takes over half an hour)
#
# Budgets are printed as PASS, MISS, UNSURE (the noise interval straddles the limit, or the figure
# is not measurable at this noise) or SUSPECT (an impossible figure: the harness, not the code),
# and never change the exit status; it is non-zero only when a benchmark program itself failed.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${LP_BUILD_DIR:-$repo/build-bench}
profile=full
do_build=1
models=alexnet,resnet18,mobilenet_v2,transformer,lstm_cell,nested
packages=efficientnet_b0,shufflenet_v2_x1_0,mobilenet_v3_small,resnet50
packages_given=0
region_models=nested,resnet18
clock=cpu
only=""
skip=""

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) profile=quick ;;
    --smoke) profile=smoke ;;
    --build) build=$2; shift ;;
    --build=*) build=${1#--build=} ;;
    --no-build) do_build=0 ;;
    --clock) clock=$2; shift ;;
    --clock=*) clock=${1#--clock=} ;;
    --models) models=$2; shift ;;
    --models=*) models=${1#--models=} ;;
    --packages) packages=$2; packages_given=1; shift ;;
    --packages=*) packages=${1#--packages=}; packages_given=1 ;;
    --region-models) region_models=$2; shift ;;
    --region-models=*) region_models=${1#--region-models=} ;;
    --only) only=$2; shift ;;
    --skip) skip=$2; shift ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
models_dir=${LP_MODELS_DIR:-$repo/models}

# Seconds of forwards per setting per model, interleaving rounds, and the rest, per profile
# (pairs: region begin/end pairs per block of the regions micro benchmark; copies: loaded copies
# of each kind the overhead rounds rotate over; min_block: forwards per block at least, so that a
# long model's block has a fast end to read, bench/README.md "The fast end"; o_rounds: the
# overhead section's rounds, 40 in the full run: at 20, resnet18's and mobilenet_v2's lines were
# undecided in one run of two, bench/results/2026-11-28-forty-rounds.md).
case $profile in
full)  target=4;    rounds=20; reps=9; thru=2;    tree_max=100000; tree_reps=3; iter_max=1000; diag=1
       pairs=1000000; s_block=200; s_rounds=15; s_renders=200; copies=3; min_block=6; o_rounds=40 ;;
quick) target=0.6;  rounds=8;  reps=3; thru=0.5;  tree_max=10000;  tree_reps=2; iter_max=1000; diag=0
       pairs=1000000; s_block=100; s_rounds=6; s_renders=50; copies=2; min_block=1; o_rounds=8 ;;
smoke) target=0.02; rounds=2;  reps=1; thru=0.02; tree_max=10000;  tree_reps=1; iter_max=100;  diag=1
       pairs=10000; s_block=10; s_rounds=1; s_renders=2; copies=1; min_block=1; o_rounds=2
       [ "$models" = alexnet,resnet18,mobilenet_v2,transformer,lstm_cell,nested ] &&
           models=resnet18,lstm_cell,nested
       [ $packages_given = 1 ] || packages="" ;;
esac
# --quick stays ~85 s: packages only when named.
[ $profile = quick ] && [ $packages_given = 0 ] && packages=""

if [ $do_build = 1 ]; then
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLP_EXPORT_MODELS=OFF >/dev/null ||
            { echo "run.sh: cmake configure failed" >&2; exit 1; }
    fi
    cmake --build "$build" --target bench -j "$(nproc)" >/dev/null ||
        { echo "run.sh: building the bench failed (cmake --build $build --target bench)" >&2; exit 1; }
fi
core=$build/bench/lp_bench_core
torch=$build/bench/lp_bench_torch
regions=$build/bench/lp_bench_regions
[ -x "$core" ] || { echo "run.sh: $core not built" >&2; exit 1; }

ncores=$(nproc)
# One thread, for libtorch and anything it uses.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

failed=0
budgets=$(mktemp)
out=$(mktemp)
trap 'rm -f "$budgets" "$out"' EXIT
start=$(date +%s)

# Runs one benchmark program, prints its table lines (prefix $2, fields joined by two spaces) and
# INFO lines as notes, and keeps its BUDGET lines for the summary.
run() {
    local prefix=$1; shift
    if ! "$@" >"$out" 2>"$out.err"; then
        echo "  FAILED ($*):"
        sed 's/^/    /' "$out.err" | tail -5
        failed=1
    fi
    grep "^$prefix|" "$out" | cut -d'|' -f2- | sed 's/|/  /g' | sed 's/^/  /'
    grep '^INFO|' "$out" | cut -d'|' -f2- | sed 's/^/    note: /'
    grep '^BUDGET|' "$out" >>"$budgets"
    rm -f "$out.err"
}

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
sanitize=$(sed -n 's/^LP_SANITIZE:BOOL=//p' "$build/CMakeCache.txt" 2>/dev/null)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
torch_version=unknown
[ -x "$torch" ] && torch_version=$("$torch" version 2>/dev/null || echo unknown)

echo "layerprof bench ($profile): $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "  machine: $ncores cores, $cpu; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  commit $commit, libtorch $torch_version, build $build (${build_type:-?})"
case "${build_type:-}" in
Release|RelWithDebInfo) ;;
*) echo "  WARNING: build type '${build_type:-?}' is not optimised: timings mean little" ;;
esac
[ "${sanitize:-OFF}" = ON ] && echo "  WARNING: sanitizer build: timings mean little"
[ $profile = smoke ] && echo "  (smoke: tiny repetition counts, the numbers mean nothing)"

# ---- sampling on a live session (layerprof.hpp, docs/sampling.md) ---------------------------
sampling_section() {
    local sampling=$build/bench/lp_bench_sampling
    echo
    echo "== Sampling: a live session's stream of forwards (layerprof.hpp), 1 thread, CPU clock =="
    if [ ! -x "$sampling" ]; then
        echo "  skipped: lp_bench_sampling was not built (no libtorch)"
        return
    fi
    echo "  x_opt: the stream's time / the model as shipped (unmarked, no session), same process,"
    echo "  median of $s_rounds rounds' ratios of $s_block forwards each, ± its interval (bench/README.md,"
    echo "  Verdicts; [A/A]: a second copy as shipped, whose spread widens the others);"
    echo "  +ns/fwd: the same difference per forward (never: what an unsampled forward costs)"
    printf '  %-12s  %-6s  %14s  %9s  %9s  %8s  %s\n' model rate x_opt±noise base_us +ns/fwd profiled \
        check
    IFS=, read -r -a sampling_list <<<"$models"
    for m in "${sampling_list[@]}"; do
        local pt=$models_dir/$m.pt spec
        [ -f "$pt" ] || { echo "  $m: $pt not found; skipped"; continue; }
        spec=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["inputs"][0])' \
            "$models_dir/$m.counts.json" 2>/dev/null) || { echo "  $m: no recorded input; skipped"; continue; }
        if ! "$sampling" stream "$pt" "$spec" --block "$s_block" --rounds "$s_rounds" >"$out" 2>"$out.err"; then
            echo "  FAILED ($m):"; sed 's/^/    /' "$out.err" | tail -5; failed=1; continue
        fi
        awk -F'|' '$1 == "SAMPLING" { printf "  %-12s  %-6s  %7.4f±%.4f  %9s  %9s  %8s  %s\n", $2, $3, $4, $5, $6, $7, $8, $9 }' "$out"
        grep '^INFO|' "$out" | cut -d'|' -f2- | sed 's/^/    note: /'
        # The budget (the stream at 1/100 within 1.01x of the model as shipped), judged by the
        # program with its interval.
        grep '^BUDGET|' "$out" >>"$budgets"
    done
    # The exposition of a resnet50 (exported here with Debian's torchvision when models/ lacks it).
    local r50=$models_dir/resnet50.pt
    [ $profile = smoke ] && r50=$models_dir/resnet18.pt
    if [ ! -f "$r50" ]; then
        r50=$build/bench/resnet50.pt
        [ -f "$r50" ] || /usr/bin/python3 -c 'import sys, torch, torchvision
torch.jit.script(torchvision.models.resnet50(weights=None).eval()).save(sys.argv[1])' "$r50" \
            >/dev/null 2>&1 || { echo "  resnet50: export failed (torchvision?); render skipped"; return; }
    fi
    echo
    echo "== The exposition (openmetrics) of a live session, rendered into memory =="
    printf '  %-12s  %9s  %8s  %s\n' model median_us bytes series
    if "$sampling" render "$r50" 1x3x224x224 --renders "$s_renders" >"$out" 2>"$out.err"; then
        awk -F'|' '$1 == "RENDER" { printf "  %-12s  %9s  %8s  %s\n", $2, $3, $4, $5 }' "$out"
    else
        echo "  FAILED (render):"; sed 's/^/    /' "$out.err" | tail -5; failed=1
    fi
    rm -f "$out.err"
}

if [ "$only" = sampling ]; then
    sampling_section
    echo
    echo "== Budgets (reported, never enforced) =="
    awk -F'|' '{ printf "  %-7s  %-58s  %-36s  (%s)%s\n", $5, $2, $3, $4, (NF > 5 ? "  " $6 : "") }' \
        "$budgets"
    exit $failed
fi

# Appends the packages (--packages) to model_list as paths, exporting the missing ones; a note
# instead where libtorch is 1.x (no AOTInductor) or the export is not possible.
add_packages() {
    [ -n "$packages" ] || return 0
    if [[ $torch_version != 2.* ]]; then
        echo "  packages ($packages): skipped, libtorch $torch_version runs no AOTInductor package"
        return 0
    fi
    local py=${LP_PT2_PYTHON:-$repo/.deps/torch2/bin/python} dir=$build/bench/pt2 name path
    local -a package_list
    IFS=, read -r -a package_list <<<"$packages"
    for name in "${package_list[@]}"; do
        path=$models_dir/$name.pt2
        [ -f "$path" ] || path=$dir/$name.pt2
        if [ ! -f "$path" ]; then
            if [ ! -x "$py" ]; then
                echo "  $name.pt2: not found, and no Python to export it ($py; set LP_PT2_PYTHON); skipped"
                continue
            fi
            mkdir -p "$dir"
            # A failed export is the harness's failure: the exit status says so.
            if ! "$py" "$here/export_package.py" "$name" "$path" >"$out" 2>&1; then
                echo "  $name.pt2: FAILED (export with $py):"
                grep -v '^W' "$out" | tail -3 | sed 's/^/    /'
                failed=1
                continue
            fi
        fi
        model_list+=("$path")
    done
}

# ---- overhead per model ----------------------------------------------------------------------
echo
echo "== Overhead per forward: CPU, batch 1, 1 thread; medians of interleaved blocks ($clock clock) =="
if [ ! -x "$torch" ]; then
    echo "  skipped: lp_bench_torch was not built (no libtorch)"
else
    printf '  %-12s  %-7s  %-10s  %7s  %10s  %10s  %14s  %12s  %8s  %8s  %8s  %s\n' \
        model exec setting ops/fwd base_us prof_us x_same±noise x_opt±noise ns/op ns/op_opt \
        beg+end_us check
    IFS=, read -r -a model_list <<<"$models"
    add_packages
    for m in "${model_list[@]}"; do
        # NAME or NAME=SPEC;SPEC (inputs as --input, for a model that records none)
        inputs=()
        if [[ $m != *.pt2 && $m == *=* ]]; then
            IFS=';' read -r -a specs <<<"${m#*=}"
            for s in "${specs[@]}"; do inputs+=(--input "$s"); done
            m=${m%%=*}
        fi
        pt=$models_dir/$m.pt
        execs=(markers hooks)
        if [[ $m == *.pt ]]; then pt=$m; m=$(basename "$m" .pt); fi
        # An AOTInductor package runs as compiled: one setting, x_opt against the same package
        # unprofiled (docs/pt2.md).
        if [[ $m == *.pt2 ]]; then pt=$m; m=$(basename "$m"); execs=(markers); fi
        if [ ! -f "$pt" ]; then
            echo "  $m: $pt not found (export the models: see models/README.md); skipped"
            continue
        fi
        common=(--name "$m" --target-s "$target" --rounds "$o_rounds" --clock "$clock" --diag "$diag"
                --copies "$copies" --min-block "$min_block")
        # Each process loads copies of the model, optimised and unmarked ones as x_opt's reference,
        # and rotates over them round by round (bench/README.md, "Copies").
        for exec in "${execs[@]}"; do
            run ROW "$torch" overhead "$pt" --exec $exec "${common[@]}" "${inputs[@]}"
        done
    done

    # ---- report generation ---------------------------------------------------------------------
    echo
    echo "== Report generation: end of the last forward -> finished tree (finish + render) =="
    printf '  %-12s  %-10s  %6s  %9s  %9s  %9s  %s\n' model setting rows finish_ms render_ms \
        total_ms reps
    if [ -f "$models_dir/resnet18.pt" ]; then
        run REPORT "$torch" report "$models_dir/resnet18.pt" --reps "$reps"
    else
        echo "  skipped: resnet18.pt not found"
    fi
fi

# ---- regions, steps, a disabled session (the public API) -------------------------------------
echo
echo "== Regions: one lp_session_region_begin + lp_session_region_end pair, back to back (ns of CPU time) =="
if [ ! -x "$regions" ]; then
    echo "  skipped: lp_bench_regions was not built (no libtorch)"
else
    IFS=, read -r -a region_list <<<"$region_models"
    region_pts=()
    for m in "${region_list[@]}"; do
        if [ -f "$models_dir/$m.pt" ]; then
            region_pts+=("$models_dir/$m.pt")
        else
            echo "  $m: $models_dir/$m.pt not found (export the models: see models/README.md); skipped"
        fi
    done
    if [ ${#region_pts[@]} = 0 ]; then
        echo "  skipped: no model to open a session on"
    else
        printf '  %-13s  %8s  %12s  %8s  %s\n' setting ns/pair x_empty±noise +ns "pairs x rounds"
        run MICRO "$regions" micro "${region_pts[0]}" --pairs "$pairs" --rounds "$rounds"
        echo
        echo "== Regions in a program's loop: 3 regions + forward + step per iteration vs bare forwards ($clock clock) =="
        printf '  %-12s  %-11s  %-6s  %-4s  %10s  %13s  %9s  %10s  %8s  %s\n' model setting calls \
            prof us/iter x_bare±noise +us/iter in_loop_ns +ns "rounds x iters"
        for pt in "${region_pts[@]}"; do
            run MACRO "$regions" macro "$pt" --target-s "$target" --rounds "$rounds" \
                --clock "$clock" --diag "$diag"
        done
    fi
fi

# ---- core ------------------------------------------------------------------------------------
echo
echo "== Core throughput: synthetic events through the collector, one core, no torch =="
printf '  %-38s  %5s  %8s  %7s  %s\n' "events (collector setting)" ev/it "M ev/s" ns/ev check
run THRU "$core" throughput --seconds "$thru"

echo
echo "== Memory per module and per op (bytes, from the core's allocation sizes) =="
run MEM "$core" memory

echo
echo "== Scaling: memory over iterations (memory+events on) =="
printf '  %-12s  %6s  %10s  %8s  %10s\n' model iters heap_bytes heap_calls rss_MiB
if [ -x "$torch" ] && [ -f "$models_dir/nested.pt" ]; then
    run ITER "$torch" iterations "$models_dir/nested.pt" --max "$iter_max"
fi
printf '  %-12s  %6s  %10s  %8s  %10s\n' "(no torch)" iters live_bytes heap_calls rss_MiB
run CITER "$core" iterations --max "$iter_max"

echo
echo "== Scaling: tree size (10-ary tree, one op per module; ms per step, ns per module) =="
printf '  %7s  %7s  %9s  %9s  %9s  %9s  %9s  %6s  %6s  %6s  %6s  %s\n' modules nodes build_ms \
    ev1st_ms events_ms finish_ms render_ms ev1/mod ev/mod fin/mod ren/mod reps
run TREE "$core" treesize --max "$tree_max" --reps "$tree_reps"

[ "$skip" = sampling ] || sampling_section

# ---- budgets ---------------------------------------------------------------------------------
echo
echo "== Budgets (reported, never enforced) =="
awk -F'|' '{ printf "  %-7s  %-58s  %-36s  (%s)%s\n", $5, $2, $3, $4, (NF > 5 ? "  " $6 : "") }' \
    "$budgets"
count() { awk -F'|' -v v="$1" '$5 == v' "$budgets" | wc -l; }
echo "  $(count PASS) PASS, $(count MISS) MISS, $(count UNSURE) UNSURE, $(count SUSPECT) SUSPECT;" \
    "$(( $(date +%s) - start )) s"
exit $failed

#!/usr/bin/env bash
# run_install_test.sh BUILD SOURCE MODEL [PT2_DIR]: installs BUILD into a temporary prefix, then builds
# examples/profile_model.c as an outside project twice, with find_package(layerprof) and with
# pkg-config, and examples/attach.cpp (C++, libtorch too) with find_package, and runs them on
# MODEL (which takes 1x3x16x16). Neither build sees the source tree's include/ or src/.
# LP_CONSUMER_FLAGS: extra compiler and linker flags for both (the sanitizer build's, since a
# program linking an ASan library must be built with ASan too).
# PT2_DIR (libtorch 2.x builds): integration.pt2_export's packages; examples/attach_pt2.cpp is then
# built the same way and run on nested.pt2.
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) model=$3 pt2_dir=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
    { cat "$work/install.log"; exit 1; }
pc=$(find "$prefix" -name layerprof.pc) # lib/ or lib/<multiarch>/, as GNUInstallDirs decides
libdir=$(dirname "$(dirname "$pc")")
for f in "$prefix/include/layerprof.h" "$prefix/include/layerprof.hpp" "$prefix/bin/layerprof" "$pc" \
         "$libdir/cmake/layerprof/layerprofConfig.cmake" "$libdir/cmake/layerprof/layerprofTargets.cmake"; do
    [ -e "$f" ] || { echo "not installed: $f"; find "$prefix"; exit 1; }
done
soname=$(readelf -d "$libdir/liblayerprof.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -e "$libdir/$soname" ] || { echo "SONAME $soname is not installed"; exit 1; }
# The installed library must not find anything through the build tree.
if readelf -d "$libdir/$soname" | grep -E 'R(UN)?PATH' | grep -q "$build"; then
    echo "the installed library's RUNPATH names the build tree"; exit 1
fi

echo "== find_package(layerprof)"
extra=${LP_CONSUMER_FLAGS:-}
cmake -S "$src/tests/install/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
      -DLP_EXAMPLE="$src/examples/profile_model.c" > "$work/configure.log" ||
    { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/cmake-build/profile_model" "$model" > "$work/out1.txt"

echo "== find_package(layerprof) and find_package(Torch): a C++ program that holds its module"
cmake -S "$src/tests/install/consumer_cxx" -B "$work/cxx-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
      -DLP_EXAMPLE="$src/examples/attach.cpp" > "$work/configure-cxx.log" 2>&1 ||
    { cat "$work/configure-cxx.log"; exit 1; }
cmake --build "$work/cxx-build" > "$work/build-cxx.log" 2>&1 || { cat "$work/build-cxx.log"; exit 1; }
"$work/cxx-build/attach" "$model" 1x3x16x16 > "$work/out4.txt"

outs="out1 out2 out3 out4"
if [ -n "$pt2_dir" ]; then
    echo "== the same C++ project on a package it loads itself (layerprof_pt2.hpp)"
    [ -e "$prefix/include/layerprof_pt2.hpp" ] || { echo "not installed: layerprof_pt2.hpp"; exit 1; }
    cmake -S "$src/tests/install/consumer_cxx" -B "$work/pt2-build" -DCMAKE_PREFIX_PATH="$prefix" \
          -DCMAKE_CXX_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" \
          -DLP_EXAMPLE="$src/examples/attach_pt2.cpp" > "$work/configure-pt2.log" 2>&1 ||
        { cat "$work/configure-pt2.log"; exit 1; }
    cmake --build "$work/pt2-build" > "$work/build-pt2.log" 2>&1 || { cat "$work/build-pt2.log"; exit 1; }
    "$work/pt2-build/attach" "$pt2_dir/nested.pt2" 1x3x16x16 > "$work/out5.txt"
    outs="$outs out5"
fi

echo "== pkg-config layerprof"
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs layerprof)
# shellcheck disable=SC2086 # both are lists of words
cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/profile_model.c" $flags -o "$work/profile_model_pc"
# pkg-config does not set a RUNPATH: the program finds liblayerprof through the loader's path,
# and liblayerprof finds its libtorch through its own RUNPATH.
LD_LIBRARY_PATH="$libdir" "$work/profile_model_pc" "$model" > "$work/out2.txt"

echo "== the installed CLI"
"$prefix/bin/layerprof" "$model" --iterations 2 --warmup 1 > "$work/out3.txt"

# examples/serve.cpp is built and installed where libmicrohttpd was found: it must then run from
# the prefix, finding liblayerprof and libtorch without the build tree.
if [ -e "$build/examples/layerprof-serve" ]; then
    echo "== the installed layerprof-serve"
    serve=$prefix/bin/layerprof-serve
    [ -x "$serve" ] || { echo "not installed: $serve"; exit 1; }
    if readelf -d "$serve" | grep -E 'R(UN)?PATH' | grep -q "$build"; then
        echo "the installed layerprof-serve's RUNPATH names the build tree"; exit 1
    fi
    "$serve" --help | grep -q -- '--sample-every' || { echo "layerprof-serve --help failed"; exit 1; }
    rc=0; "$serve" "$model" --input 1x3x16x16 --sample-every 0 2> /dev/null || rc=$?
    [ "$rc" = 2 ] || { echo "layerprof-serve --sample-every 0: exit $rc, not 2"; exit 1; }
fi

for out in $outs; do
    grep -q '^├── \|^└── ' "$work/$out.txt" ||
        { echo "$out: no module tree:"; cat "$work/$out.txt"; exit 1; }
done
echo "run_install_test: ok (prefix $prefix, $soname)"

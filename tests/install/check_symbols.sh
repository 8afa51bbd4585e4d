#!/usr/bin/env bash
# check_symbols.sh LIB HEADER: the dynamic symbols LIB defines are exactly the functions HEADER
# declares LP_API. An internal function exported by accident (lp_tree_add, a shim lps_*, a
# libstdc++ template instance) or a public one missing both fail.
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
# Each LP_API declaration names its function last before the first '(' (clang-format may wrap
# the line, so join the declaration first).
declared=$(tr '\n' ' ' < "$header" | grep -o 'LP_API [^;(]*(' | sed 's/($//' |
           grep -o 'lp_[a-z0-9_]*$' | sort -u)
status=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$extra" ]; then
    echo "check_symbols: $lib exports symbols that are not LP_API in $header:"; echo "$extra" | sed 's/^/  /'
    status=1
fi
if [ -n "$missing" ]; then
    echo "check_symbols: $header declares LP_API functions that $lib does not export:"; echo "$missing" | sed 's/^/  /'
    status=1
fi
[ $status = 0 ] && echo "check_symbols: ok, $(echo "$exported" | wc -l) symbols, all of them the public API"
exit $status

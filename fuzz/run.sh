#!/bin/sh
# fuzz/run.sh SECONDS: the configuration fuzzer alone (kept for docs/config.md's command).
exec "$(dirname "$0")/run_all.sh" "${1:-60}" fuzz_config

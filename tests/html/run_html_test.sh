#!/usr/bin/env bash
# run_html_test.sh PYTHON LAYERPROF MODELS_DIR OUT_DIR
# Writes the HTML view of a real run (resnet18, memory and a timeline) and drives it in headless
# Chromium (test_html.py). Exits 77 (ctest: skipped) with the reason when Chromium, chromedriver or
# Selenium is missing; scripts/setup.sh installs all three (Selenium into .deps/selenium).
set -u
PY=$1
LP=$2
MODELS=$3
OUT=$4
HERE=$(cd "$(dirname "$0")" && pwd)

skip() { echo "SKIPPED: $*"; exit 77; }
[ -x "$PY" ] || command -v "$PY" >/dev/null 2>&1 || skip "no python to run Selenium ($PY)"
"$PY" -c 'import selenium' 2>/dev/null ||
  skip "Selenium is not installed for $PY (scripts/setup.sh makes .deps/selenium)"
CHROME=${LP_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
DRIVER=${LP_CHROMEDRIVER:-$(command -v chromedriver || true)}
[ -n "$CHROME" ] || skip "no Chromium (apt-get install chromium, or set LP_CHROMIUM)"
[ -n "$DRIVER" ] || skip "no chromedriver (apt-get install chromium-driver, or set LP_CHROMEDRIVER)"

rm -rf "$OUT" && mkdir -p "$OUT" || exit 1
"$LP" "$MODELS/resnet18.pt" --iterations 2 --memory --trace --output "$OUT/view.html" || {
  echo "FAIL: layerprof could not write the page"
  exit 1
}
exec "$PY" "$HERE/test_html.py" "$OUT/view.html" "$OUT" "$CHROME" "$DRIVER"

#!/bin/bash
# explain --tail under a cause injected on the server's CPU (CPU 1), TRIALS
# times each: a CPU hog, a timer-interrupt storm, ipcmark's own irq load.
# Prints each trial's top signature, and per cause how many named it.
# Root (tracing), stress-ng installed. Usage: bench/tail_causes.sh [TRIALS] [CAUSE…]
set -uo pipefail
TRIALS=${1:-10}; shift || true
CAUSES=${*:-hog timer irq}
BIN=${BIN:-target/release/ipcmark}
OUT=${OUT:-/tmp/tail-causes}; mkdir -p "$OUT"
run() { # cause trial
    local extra=() stress=()
    case $1 in
        hog) stress=(stress-ng --cpu 1 --taskset 1 --timeout 120s) ;;
        timer) stress=(stress-ng --timer 1 --timer-freq 100000 --taskset 1 --timeout 120s) ;;
        irq) extra=(--load irq:4000 --load-cpus 1) ;;
    esac
    local pid=
    if [ ${#stress[@]} -gt 0 ]; then "${stress[@]}" > /dev/null 2>&1 & pid=$!; sleep 1; fi
    "$BIN" explain pipe --sizes 64 --cpus 0,1 --quick --passes 1 --no-save --tail "${extra[@]}" \
        --json "$OUT/$1-$2.json" > "$OUT/$1-$2.txt" 2>&1
    [ -n "$pid" ] && { kill "$pid"; wait "$pid" 2>/dev/null; pkill -f stress-ng; }
    python3 - "$OUT/$1-$2.json" <<'PY'
import json, sys
try:
    ex = json.load(open(sys.argv[1]))["results"][0]["explain"]
    s = ex["tail"]["signatures"][0]
    print(f"{s['count']:>3}/{len(ex['tail']['slowest'])}  {s['signature']}")
except Exception as e:
    print("no tail:", e)
PY
}
for cause in $CAUSES; do
    echo "== $cause"
    for t in $(seq 1 "$TRIALS"); do printf '%2d ' "$t"; run "$cause" "$t"; done
done

#!/usr/bin/env bash
# Runs the default rate sweep (`ipcmark run --mode rate --sizes 64`, every mechanism that
# can queue messages) twice, back to back, and prints for each mechanism the knee and the
# saturation rate of both runs and their ratio, the time each run took, and how many
# knees the second run reproduced within ±15% (issue #40: at least 10 mechanisms in at
# most 10 minutes; knees within ±15% on a rerun).
#
# usage: [KEEP=DIR] bench/rate_sweep.sh [extra run options...]
#   KEEP=DIR keeps both runs' reports (DIR/r1.json, DIR/r2.json) for a closer look.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  WORK=$KEEP
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
cargo build --release --quiet
for k in 1 2; do
  start=$(date +%s)
  ./target/release/ipcmark run --mode rate --sizes 64 --no-save --json "$WORK/r$k.json" "$@" \
    >"$WORK/r$k.txt" 2>&1 || { tail -5 "$WORK/r$k.txt" >&2; exit 1; }
  echo "run $k: $(( $(date +%s) - start )) s"
done
python3 - "$WORK/r1.json" "$WORK/r2.json" <<'PY'
import json, sys
def curves(path):
    out = {}
    for r in json.load(open(path))["results"]:
        c = r.get("rate_curve")
        if r.get("status") == "ok" and c:
            med = lambda v: v["median"] if v else None
            out[r["benchmark"]] = (med(c.get("knee_rate")), med(c.get("saturation_rate")))
    return out
a, b = curves(sys.argv[1]), curves(sys.argv[2])
fmt = lambda v: "-" if v is None else f"{v/1e3:.0f}k"
print(f"{'mechanism':16} {'knee 1':>8} {'knee 2':>8} {'ratio':>6} {'sat 1':>8} {'sat 2':>8}")
within = both = 0
for m in sorted(a.keys() & b.keys()):
    (k1, s1), (k2, s2) = a[m], b[m]
    ratio = k2 / k1 if k1 and k2 else None
    if ratio is not None:
        both += 1
        within += abs(ratio - 1) <= 0.15
    print(f"{m:16} {fmt(k1):>8} {fmt(k2):>8} {('-' if ratio is None else f'{ratio:.2f}'):>6} {fmt(s1):>8} {fmt(s2):>8}")
print(f"mechanisms with a curve: {len(a)} and {len(b)}; knees reproduced within ±15%: {within} of {both}")
PY

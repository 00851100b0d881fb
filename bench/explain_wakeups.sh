#!/usr/bin/env bash
# Checks that explain's wake-up parts carry the difference between a pipe round trip
# across two CPUs and one on a single CPU (the anatomy's claim: across CPUs a round trip
# wakes a sleeping CPU twice; on one CPU it only waits behind the other side).
#
# Each round explains pipe at 64 B across CPUs and on one CPU, back to back, with deep
# idle states allowed (--cpu-latency off) so the two differ, and prints
#   share = (wake-ups across - wake-ups on one) / (round trip across - round trip on one)
# of the medians (a vCPU the host preempts mid-call lengthens whatever part was running
# and moves the means; the means' share is printed beside it). The script reports the
# median share over the rounds; the anatomy is right when it is near 1 (at least 0.8).
# A round whose two round trips differ by under 2 µs or 20% (a host that polls its
# halted vCPUs) has nothing to apportion and is left out.
#
# Needs root (tracefs). usage: bench/explain_wakeups.sh [ROUNDS]   (env: CPU_A=0 CPU_B=1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
A=${CPU_A:-0}
B=${CPU_B:-1}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cargo build --release --quiet
IPCMARK=./target/release/ipcmark

explain() {
  "$IPCMARK" explain pipe --sizes 64 --quick --passes 1 --no-save --round-trips 2000 \
    --cpu-latency off --cpus "$A,$B" "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
}

shares=()
for round in $(seq 1 "$ROUNDS"); do
  explain --json "$WORK/cross.json"
  explain --same-cpu --json "$WORK/same.json"
  line=$(python3 - "$WORK/cross.json" "$WORK/same.json" <<'PY'
import json, sys
def of(path, centre):
    ex = json.load(open(path))["results"][0]["explain"]
    trip = ex["traced_round_trip_ns"][centre]
    wake = sum(p[centre + "_ns"] for p in ex["parts"] if " wake-up: " in p["name"])
    return trip, wake
(c, cw), (s, sw) = of(sys.argv[1], "median"), of(sys.argv[2], "median")
(cm, cmw), (sm, smw) = of(sys.argv[1], "mean"), of(sys.argv[2], "mean")
if c - s < 2000 or c - s < 0.2 * s:
    print(f"skip round trips {c:.0f} and {s:.0f} ns differ too little to apportion")
else:
    print(f"{(cw - sw) / (c - s):.3f} round trips {c:.0f}/{s:.0f} ns, wake-ups {cw:.0f}/{sw:.0f} ns, "
          f"means' share {(cmw - smw) / (cm - sm):.2f}")
PY
)
  echo "round $round: share $line"
  case $line in skip*) ;; *) shares+=("${line%% *}") ;; esac
done
if [ ${#shares[@]} -eq 0 ]; then
  echo "no round had a difference to apportion"
  exit 0
fi
printf '%s\n' "${shares[@]}" | sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "median share of the difference carried by the wake-ups: %.2f over %d rounds (%s)\n", m, NR, (m>=0.8?"as the anatomy claims":"BELOW 0.8")}'

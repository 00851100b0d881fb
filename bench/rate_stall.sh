#!/usr/bin/env bash
# Coordinated omission, seen (issue #40): runs one rate figure (pipe, 64 B, 50k msg/s,
# 250 000 messages a point, so about 5 s) while the whole run is stopped for 1 ms once a
# second from outside (SIGSTOP to its process group, 1 ms, SIGCONT), and prints the
# figure's p99.9 from the intended send beside its p99.9 from the actual send. A closed
# loop, or a figure timed from the actual send, hides the stall: the messages due while the
# run was stopped are sent late, back to back, and each looks fast from its own send.
#
# usage: bench/rate_stall.sh [MECHANISM] [RATE] [run options…]   (e.g. --rt 50: the receiver
# under SCHED_FIFO, so that the machine's own tasks cannot delay its wake-ups)
set -euo pipefail
cd "$(dirname "$0")/.."
MECH=${1:-pipe}
RATE=${2:-50k}
shift $(( $# < 2 ? $# : 2 ))
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cargo build --release --quiet
setsid ./target/release/ipcmark run "$MECH" --mode rate --rates "$RATE" --sizes 64 --passes 1 \
  --messages 250000 --no-save --json "$WORK/r.json" "$@" >"$WORK/out.txt" 2>&1 &
RUN=$!
python3 - "$RUN" <<'PY'
import os, signal, sys, time
pid = int(sys.argv[1])
time.sleep(1.5)  # past the set-up, into the point
stalls = 0
while True:
    try:
        pgid = os.getpgid(pid)
        os.killpg(pgid, signal.SIGSTOP)
        time.sleep(0.001)
        os.killpg(pgid, signal.SIGCONT)
        stalls += 1
    except ProcessLookupError:
        break
    time.sleep(1)
print(f"stalls: {stalls} of 1 ms, one a second")
PY
wait "$RUN" || { cat "$WORK/out.txt" >&2; exit 1; }
python3 - "$WORK/r.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    for p in r["rate_curve"]["points"]:
        l, s = p["latency_ns"], p["service_ns"]
        print(f'{r["benchmark"]} {r["size_bytes"]} B at {p["offered_rate"]:.0f} msg/s, {p["received"]} messages, '
              f'{p["late"]} late (behind by up to {p["behind_max_ns"]/1e3:.0f} µs)')
        print(f'  from the intended send: p50 {l["p50"]/1e3:.1f} µs, p99 {l["p99"]/1e3:.1f} µs, p99.9 {l["p999"]/1e3:.1f} µs, max {l["max"]/1e3:.0f} µs')
        print(f'  from the actual send:   p50 {s["p50"]/1e3:.1f} µs, p99 {s["p99"]/1e3:.1f} µs, p99.9 {s["p999"]/1e3:.1f} µs, max {s["max"]/1e3:.0f} µs')
PY

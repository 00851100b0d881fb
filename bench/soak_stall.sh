#!/bin/bash
# A soak of pipe 64 B with one stall of the server injected from outside:
# SIGSTOP, 2 ms, SIGCONT, AT seconds in. Prints the tail's top and the soak's
# memory. Root (tracing). Usage: [TAIL=K] [EXTRA="--rt 50"] bench/soak_stall.sh [DURATION] [AT] [OUT.json]
set -euo pipefail
DUR=${1:-30s}; AT=${2:-10}; OUT=${3:-/tmp/soak-stall.json}
BIN=${BIN:-target/release/ipcmark}
"$BIN" explain pipe --sizes 64 --quick --passes 1 --no-save --tail "${TAIL:-20}" --duration "$DUR" ${EXTRA:-} \
    --json "$OUT" > /tmp/soak-stall.txt 2>&1 &
IPC=$!
# The explain's traced pass starts after its untraced figure: wait for its instance.
for _ in $(seq 1 600); do
    ls /sys/kernel/tracing/instances 2>/dev/null | grep -q "^ipcmark-$IPC-" && break
    sleep 0.1
done
sleep "$AT"
SERVER=$(cat /proc/$IPC/task/*/children | tr ' ' '\n' | grep . | head -1)
python3 - "$SERVER" <<'PY'
import os, signal, sys, time
pid = int(sys.argv[1])
t0 = time.monotonic_ns()
os.kill(pid, signal.SIGSTOP)
time.sleep(0.002)
os.kill(pid, signal.SIGCONT)
print(f"stalled server {pid} for {(time.monotonic_ns() - t0) / 1e6:.2f} ms")
PY
wait $IPC
grep -A6 "tail: the slowest" /tmp/soak-stall.txt
python3 - "$OUT" <<'PY'
import json, sys
ex = json.load(open(sys.argv[1]))["results"][0]["explain"]
s = ex["tail"]["slowest"][0]
print("slowest:", s["index"], s["round_trip_ns"], s["signature"])
for i, t in enumerate(ex["tail"]["slowest"]):
    if "stopped" in t["signature"]:
        print(f"the stall: rank {i + 1}: #{t['index']} {t['round_trip_ns'] / 1e6:.2f} ms: {t['signature']}")
print("soak:", {k: v for k, v in ex["soak"].items() if k != "cpus"})
PY

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
# The injector starts now, not at the stall: a Python started at the stall
# spends milliseconds of CPU on both vCPUs getting going (a pyenv shim, then
# the interpreter), and the round trips around the stall would wait behind it.
# (The soak's tail showed them: "run-queue wait behind python3", 2-5 ms.)
python3 - "$IPC" "$AT" <<'PY' &
import os, signal, sys, time
ipc, at = int(sys.argv[1]), float(sys.argv[2])
# The explain's traced pass starts after its untraced figure: wait for its instance.
for _ in range(600):
    try:
        if any(n.startswith(f"ipcmark-{ipc}-") for n in os.listdir("/sys/kernel/tracing/instances")):
            break
    except OSError:
        pass
    time.sleep(0.1)
time.sleep(at)
children = []
for task in os.listdir(f"/proc/{ipc}/task"):
    children += open(f"/proc/{ipc}/task/{task}/children").read().split()
pid = int(children[0])
t0 = time.monotonic_ns()
os.kill(pid, signal.SIGSTOP)
time.sleep(0.002)
os.kill(pid, signal.SIGCONT)
print(f"stalled server {pid} for {(time.monotonic_ns() - t0) / 1e6:.2f} ms", flush=True)
# Nor does it end before the soak: an interpreter's exit also takes milliseconds.
while os.path.exists(f"/proc/{ipc}"):
    time.sleep(0.5)
PY
INJ=$!
wait $IPC
wait $INJ
grep -A6 "tail: the slowest" /tmp/soak-stall.txt
python3 - "$OUT" <<'PY'
import json, sys
ex = json.load(open(sys.argv[1]))["results"][0]["explain"]
s = ex["tail"]["slowest"][0]
print("slowest:", s["index"], s["round_trip_ns"], s["signature"])
for i, t in enumerate(ex["tail"]["slowest"]):
    stopped = [p for p in t["parts"] if p["name"].endswith("stopped")]
    if stopped:
        print(f"the stall: rank {i + 1}: #{t['index']} {t['round_trip_ns'] / 1e6:.2f} ms, "
              f"{stopped[0]['name']} {stopped[0]['ns'] / 1e6:.2f} ms; signature: {t['signature']}")
print("soak:", {k: v for k, v in ex["soak"].items() if k != "cpus"})
PY

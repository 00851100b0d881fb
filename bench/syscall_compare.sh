#!/usr/bin/env bash
# Checks ipcmark's syscall-getpid figure against a plain C loop of syscall(SYS_getpid)
# (bench/ref/getpid.c), both on one CPU, measured alternately in one run.
#
# Both sides calibrate to 40 ms samples, take 11 samples, report the median ns per call,
# and subtract their own empty loop's overhead per iteration. The machine's speed drifts
# between runs, so each round measures both back to back (alternating which goes first)
# and the script reports each round's ratio ipcmark / C and the median ratio.
#
# usage: bench/syscall_compare.sh [ROUNDS]   (env: CPU=1)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-9}
CPU=${CPU:-1}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cargo build --release --quiet
IPCMARK=./target/release/ipcmark
cc -O2 -o "$WORK/getpid" bench/ref/getpid.c

ipcmark_getpid() {
  # Its warnings (hypervisor, idle states) would interleave with the table.
  "$IPCMARK" run syscall-getpid --cpus "$CPU" --json "$WORK/r.json" >/dev/null 2>&1
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"][0]; print(r["latency_ns"]["median"] if r["status"]=="ok" else "nan")' "$WORK/r.json"
}

c_getpid() {
  "$WORK/getpid" "$CPU" 40 11 2>/dev/null
}

printf '%-6s %14s %14s %8s\n' round "ipcmark ns" "C loop ns" ratio
ratios=() xs=() ys=()
for round in $(seq 1 "$ROUNDS"); do
  if (( round % 2 )); then
    x=$(ipcmark_getpid); y=$(c_getpid)
  else
    y=$(c_getpid); x=$(ipcmark_getpid)
  fi
  q=$(python3 -c "print(f'{$x/$y:.3f}')")
  ratios+=("$q"); xs+=("$x"); ys+=("$y")
  printf '%-6s %14.1f %14.1f %8s\n' "$round" "$x" "$y" "$q"
done

med() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(a) for a in sys.argv[1:]):.3f}")' "$@"; }
m=$(med "${ratios[@]}")
echo
echo "CPU $CPU: ipcmark syscall-getpid median $(med "${xs[@]}") ns, C syscall(SYS_getpid) loop median $(med "${ys[@]}") ns"
echo "median ratio ipcmark / C: $m ($(python3 -c "print('within' if abs($m - 1) <= 0.10 else 'NOT within')") 10%)"

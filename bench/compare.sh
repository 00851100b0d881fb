#!/usr/bin/env bash
# Checks ipcmark's pipe figure against peer tools, measured alternately in one run:
#   1. both sides on one CPU:  ipcmark run pipe --same-cpu   vs  taskset -c CPU perf bench sched pipe (usecs/op / 2)
#   2. sides on two CPUs:      ipcmark run pipe --cpus A,B   vs  bench/ref/pingpong.c (minimal C ping-pong)
#   3. ipcmark's shm-spin next to its pipe figure (the hardware floor beside a syscall path)
# The machine's speed drifts between runs, so each round measures both sides back to
# back and the script reports the median of the per-round ratios.
#
# usage: bench/compare.sh [ROUNDS]   (env: CPU_A=0 CPU_B=1 SIZE=64)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
A=${CPU_A:-0}
B=${CPU_B:-1}
SIZE=${SIZE:-64}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Both sides of every ratio measure under the same CPU idle conditions: ipcmark
# holds /dev/cpu_dma_latency at 0 by default, so the script holds it for the peer
# tools too; where it cannot (not root), ipcmark is told not to either.
LAT_FLAGS=()
if ! { exec 9>/dev/cpu_dma_latency && printf '0x00000000' >&9; } 2>/dev/null; then
  LAT_FLAGS=(--cpu-latency off)
  echo "cannot hold /dev/cpu_dma_latency: every figure measured with idle states allowed" >&2
fi

cargo build --release --quiet
IPCMARK=./target/release/ipcmark
cc -O2 -o "$WORK/pingpong" bench/ref/pingpong.c
if ! command -v perf >/dev/null 2>&1; then
  echo "perf not found: installing linux-perf" >&2
  apt-get install -y -qq linux-perf >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
fi

# One-way median in ns of one benchmark from an ipcmark JSON report.
median_of() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d["results"] if x["benchmark"]==sys.argv[2]][0]; print(r["latency_ns"]["median"] if r["status"]=="ok" else "nan")' "$1" "$2"
}

ipcmark_pipe() { # args: placement flags…
  "$IPCMARK" run pipe --sizes "$SIZE" "${LAT_FLAGS[@]}" "$@" --json "$WORK/r.json" >/dev/null 2>&1
  median_of "$WORK/r.json" pipe
}

perf_pipe() { # one-way ns on one CPU: usecs/op is a round trip
  taskset -c "$B" perf bench sched pipe -l 200000 2>/dev/null | awk '/usecs\/op/ {printf "%.1f\n", $1 * 1000 / 2}'
}

ref_pipe() {
  "$WORK/pingpong" "$A" "$B" "$SIZE" 20000 11
}

spin_and_pipe() {
  "$IPCMARK" run shm-spin pipe --sizes "$SIZE" "${LAT_FLAGS[@]}" --cpus "$A,$B" --json "$WORK/s.json" >/dev/null 2>&1
  echo "$(median_of "$WORK/s.json" shm-spin) $(median_of "$WORK/s.json" pipe)"
}

printf '%-6s %14s %14s %8s   %14s %14s %8s   %10s %10s\n' round "ipcmark 1cpu" "perf/2" ratio "ipcmark 2cpu" "C ref" ratio "shm-spin" "pipe"
r1=() r2=() i1=() p1=() i2=() c2=() sp=() pp=()
for round in $(seq 1 "$ROUNDS"); do
  # Alternate which side goes first so neither always runs on a warmer machine.
  if (( round % 2 )); then
    x=$(ipcmark_pipe --same-cpu --cpus "$B"); y=$(perf_pipe)
    u=$(ipcmark_pipe --cpus "$A,$B"); v=$(ref_pipe)
  else
    y=$(perf_pipe); x=$(ipcmark_pipe --same-cpu --cpus "$B")
    v=$(ref_pipe); u=$(ipcmark_pipe --cpus "$A,$B")
  fi
  read -r s p <<<"$(spin_and_pipe)"
  q1=$(python3 -c "print(f'{$x/$y:.3f}')"); q2=$(python3 -c "print(f'{$u/$v:.3f}')")
  r1+=("$q1"); r2+=("$q2"); i1+=("$x"); p1+=("$y"); i2+=("$u"); c2+=("$v"); sp+=("$s"); pp+=("$p")
  printf '%-6s %14.0f %14.0f %8s   %14.0f %14.0f %8s   %10.0f %10.0f\n' "$round" "$x" "$y" "$q1" "$u" "$v" "$q2" "$s" "$p"
done

med() { python3 -c 'import statistics,sys; print(f"{statistics.median(float(a) for a in sys.argv[1:]):.3f}")' "$@"; }
echo
echo "one CPU  : ipcmark pipe median $(med "${i1[@]}") ns, perf bench sched pipe / 2 median $(med "${p1[@]}") ns; median ratio $(med "${r1[@]}")"
echo "two CPUs : ipcmark pipe median $(med "${i2[@]}") ns, C reference median $(med "${c2[@]}") ns; median ratio $(med "${r2[@]}")"
echo "floor    : shm-spin median $(med "${sp[@]}") ns vs pipe $(med "${pp[@]}") ns one-way (CPUs $A,$B, $SIZE B)"

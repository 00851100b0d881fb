#!/usr/bin/env bash
# What delays a rate figure's receiver (issue #40): traces one point (pipe, 64 B, 50k msg/s,
# 60 000 messages) with the sched and irq tracepoints on every CPU, in a tracefs instance of
# its own (root), then lists the receiver's wake-ups that waited over 200 µs before it ran and
# what ran on its CPU meanwhile. Without --rt the receiver waits behind any task of the
# machine the scheduler does not preempt for it.
#
# usage: bench/rate_trace.sh [MECHANISM] [RATE] [run options…]
set -euo pipefail
cd "$(dirname "$0")/.."
MECH=${1:-pipe}
RATE=${2:-50k}
shift $(( $# < 2 ? $# : 2 ))
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
I=$T/instances/ipcmark-rate-trace-$$
WORK=$(mktemp -d)
trap 'echo 0 > "$I/tracing_on" 2>/dev/null; rmdir "$I" 2>/dev/null; rm -rf "$WORK"' EXIT
cargo build --release --quiet
mkdir "$I"
echo 40000 > "$I/buffer_size_kb"
for e in sched/sched_switch sched/sched_waking irq/irq_handler_entry irq/softirq_entry; do
  echo 1 > "$I/events/$e/enable"
done
echo 1 > "$I/tracing_on"
./target/release/ipcmark run "$MECH" --mode rate --rates "$RATE" --sizes 64 --passes 1 \
  --messages 60000 --no-save "$@" >"$WORK/out.txt" 2>&1 || { cat "$WORK/out.txt" >&2; exit 1; }
echo 0 > "$I/tracing_on"
cat "$I/trace" > "$WORK/trace"
python3 - "$WORK/trace" <<'PY'
import bisect, collections, re, sys
pat = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s+(.*)$')
ev = []
for line in open(sys.argv[1]):
    m = pat.match(line)
    if m:
        ev.append((float(m.group(4)), int(m.group(3)), m.group(1), int(m.group(2)), m.group(5), m.group(6)))
# The receiver: the ipcmark task woken most often.
woken = collections.Counter(re.search(r'pid=(\d+)', e[5]).group(1)
                            for e in ev if e[4] == 'sched_waking' and 'comm=ipcmark' in e[5])
rx = int(woken.most_common(1)[0][0])
wake = [(e[0], int(re.search(r'target_cpu=(\d+)', e[5]).group(1)))
        for e in ev if e[4] == 'sched_waking' and f'pid={rx} ' in e[5]]
cpu = collections.Counter(c for _, c in wake).most_common(1)[0][0]
outs = [e[0] for e in ev if e[4] == 'sched_switch' and e[1] == cpu and f'prev_pid={rx} ' in e[5]]
on_cpu = [e for e in ev if e[1] == cpu]
times = [e[0] for e in on_cpu]
waits = []
for t, _ in wake:
    i = bisect.bisect_left(outs, t)
    if i < len(outs) and outs[i] - t > 200e-6:
        waits.append((outs[i] - t, t))
waits.sort(reverse=True)
print(f"receiver pid {rx} on CPU {cpu}: {len(wake)} wake-ups, {len(waits)} waited over 200 us "
      f"({sum(w for w, _ in waits) * 1e3:.1f} ms in all)")
for w, t in waits[:8]:
    i, j = bisect.bisect_left(times, t), bisect.bisect_left(times, t + w)
    ran = collections.Counter(f"{e[2]}-{e[3]}" for e in on_cpu[i:j] if e[3] not in (0, rx))
    print(f"  {w * 1e6:7.0f} us: {', '.join(ran) or 'no other task seen (idle, or events left out)'}")
PY

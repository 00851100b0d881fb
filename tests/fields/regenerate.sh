#!/usr/bin/env bash
# Regenerates tests/fields/*.txt: the field paths of `ipcmark run … --json`
# for one small run of each mode, which tests/field_paths.rs checks the
# binary under test against (every listed path must still be there; new
# paths are allowed: the report may only gain fields).
#
# Usage: tests/fields/regenerate.sh [BINARY...]   (default: target/release/ipcmark)
#   RUNS=5    runs of each command with each binary and user
#   NOBODY=1  when root, run every command as `runuser -u nobody` too
#   ONLY=NAME regenerate only that list
#
# A path is an object's keys joined by '.', an array's elements as '[]'
# (results[].latency_ns.p99), one line per node, containers included. The
# keys of environment.mitigations are the kernel's names for the CPU's
# vulnerabilities (data, not fields): that object is listed, its keys are not;
# so are the interrupt and softirq names of a load's accounting
# (results[].load.cpus[].interrupts, .softirqs).
# Optional fields come and go with the machine (a note here, a warning there),
# so a list keeps only the paths present in EVERY run. Needs jq.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-5}
NOBODY=${NOBODY:-1}
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=(target/release/ipcmark)
for b in "${BINS[@]}"; do
  [ -x "$b" ] || { echo "no binary at $b (cargo build --release)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "jq is needed (apt-get install jq)" >&2; exit 1; }

# The short per-figure budget of tests/util (SHORT).
SHORT="--samples 2 --max-time 0 --sample-time 2ms --quick --passes 1"
# One pass needs 6 samples for a 95% interval of its median (precision).
SHORT6="--samples 6 --max-time 0 --sample-time 2ms --quick --passes 1"
# name|arguments. The test reads the arguments back from each list's
# "# args:" line and appends --json FILE, so keep them free of quoting.
LISTS=(
  "ipc-quick|run --quick"
  "oneway|run --mode oneway pipe posix-mq --sizes 64 --messages 20 --window 10 --quick"
  "stream|run --mode stream pipe udp --sizes 64 --quick --samples 2 --sample-time 3ms"
  "rate|run --mode rate pipe udp --sizes 64 --rates 2k,20k --quick --passes 1"
  "op|run syscall-getpid syscall-read-tmpfs sched-ctx-2 $SHORT6"
  "event|run rhealstone-interrupt-latency rhealstone-deadlock-break $SHORT6"
  "periodic|run timer --duration 100ms --frequencies 1000 --quick"
  "score|run thread-metric-basic thread-metric-message --period 100ms"
  "cost-model|run pipe --sizes 64,1K,4K $SHORT6"
  "passes|run pipe syscall-getpid --sizes 64 --samples 2 --max-time 0 --sample-time 2ms --quick --passes 2"
  "load|run rhealstone-task-switch syscall-getpid --load irq:1000,cpu:1,net:1k $SHORT6"
)

me=$(id -un)
users=("$me")
if [ "$(id -u)" = 0 ] && [ "$NOBODY" = 1 ] && id nobody >/dev/null 2>&1; then
  users+=(nobody)
fi
who=${users[*]}

# Field paths of a JSON report, sorted, one per line.
paths() {
  jq -r 'paths
    | select((length > 2 and .[0] == "environment" and .[1] == "mitigations") | not)
    | select((length > 5 and .[2] == "load" and (.[-2] == "interrupts" or .[-2] == "softirqs")) | not)
    | map(if type == "number" then "[]" else ".\(.)" end) | join("") | ltrimstr(".")' "$1" |
    LC_ALL=C sort -u
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 0777 "$work"

for entry in "${LISTS[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  [ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || continue
  runs=0
  for bin in "${BINS[@]}"; do
    bin=$(realpath "$bin")
    for user in "${users[@]}"; do
      for i in $(seq "$RUNS"); do
        dir=$(mktemp -d -p "$work")
        chmod 0777 "$dir"
        prefix=()
        [ "$user" = "$me" ] || prefix=(runuser -u "$user" --)
        # shellcheck disable=SC2086 # the arguments are split on purpose
        if ! "${prefix[@]}" env TMPDIR="$dir" "$bin" $args --json "$dir/r.json" \
          >"$dir/out" 2>"$dir/err"; then
          echo "$name: '$bin $args' failed as $user (run $i):" >&2
          cat "$dir/err" >&2
          exit 1
        fi
        paths "$dir/r.json" >"$dir/paths"
        if [ $runs = 0 ]; then
          cp "$dir/paths" "$work/$name.common"
        else
          LC_ALL=C comm -12 "$work/$name.common" "$dir/paths" >"$work/$name.next"
          mv "$work/$name.next" "$work/$name.common"
        fi
        runs=$((runs + 1))
        rm -rf "$dir"
      done
    done
  done
  common="$work/$name.common"
  out="tests/fields/$name.txt"
  {
    echo "# Field paths of the report of: ipcmark $args --json FILE"
    echo "# Present in every one of $runs runs ($RUNS × ${#BINS[@]} build(s) of $(git rev-parse --short HEAD) × ${who// /, }),"
    echo "# made by tests/fields/regenerate.sh; tests/field_paths.rs checks that each stays."
    echo "# args: $args"
    cat "$common"
  } >"$out"
  echo "$out: $(grep -vc '^#' "$out") paths from $runs runs"
done

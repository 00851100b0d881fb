#!/usr/bin/env bash
# Checks that the testbed's shaped link carries what a real Ethernet of its speed
# carries: streams through `ipcmark testbed up --rate RATE` (a sender in the
# client's namespace, a receiver in the agent's, both tiny python3 programs,
# independent of ipcmark's data plane) and prints the goodput reached ÷ the wire
# model's maximum (docs/remote.md, "Efficiency against the link"; the same
# formulas as src/remote/wire.rs, with the MTU and TCP timestamps of the veth).
# A ratio near 1.00 says tbf and its size table count every frame as the model
# does; UDP loss shows whether a sender blocks on its socket rather than the
# qdisc dropping.
#
# usage: bench/testbed_rate.sh [SECONDS]   (env: RATE=10M)   needs root, python3
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-8}
RATE=${RATE:-10M}
NAME=bench-rate-$$
cargo build --quiet
IPCMARK=./target/debug/ipcmark
WORK=$(mktemp -d)
trap '$IPCMARK testbed down --name "$NAME" >/dev/null; rm -rf "$WORK"' EXIT
$IPCMARK testbed up --name "$NAME" --rate "$RATE" | head -1
A=ipcmark-$NAME-a
B=ipcmark-$NAME-b
DST=$(ip -n "$B" -j addr show dev veth-b | python3 -c 'import json,sys; print([a["local"] for a in json.load(sys.stdin)[0]["addr_info"] if a["family"]=="inet"][0])')
RATE_BPS=$(tc -n "$A" -j qdisc show dev veth-a | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["options"]["rate"]*8)')
MTU=$(ip netns exec "$A" cat /sys/class/net/veth-a/mtu)
TS=$(ip netns exec "$A" cat /proc/sys/net/ipv4/tcp_timestamps)

cat > "$WORK/flow.py" <<'PY'
import socket, struct, sys, time
role, proto, host, port, size, secs = sys.argv[1:7]
port, size, secs = int(port), int(size), float(secs)
# tcp-CC: TCP with congestion control CC (TCP_CONGESTION, root may pick any
# the kernel has); plain tcp: the system's default.
cc = proto.split("-")[1] if "-" in proto else None
proto = proto.split("-")[0]
kind = socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM
if role == "recv":
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    if proto == "tcp":
        s.listen(1); s, _ = s.accept()
    else:
        # The kernel's time of arrival, not the time this program got
        # round to reading (the machine may be busy).
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMPNS", 35), 1)  # 35 on Linux
    s.settimeout(3)
    first = last = None; got = msgs = 0
    while True:
        try:
            if proto == "tcp":
                d = s.recv(1 << 17); t = time.monotonic()
            else:
                d, anc, _, _ = s.recvmsg(1 << 17, 64)
                sec, nsec = struct.unpack("qq", anc[0][2][:16])
                t = sec + nsec * 1e-9
        except socket.timeout:
            break
        if not d:
            break
        # The first arrival starts the clock; bytes are counted after it.
        if first is None:
            first = t
        else:
            got += len(d); msgs += 1
        last = t
    print(got, (last - first) if first is not None else 0.0, msgs)
else:
    s = socket.socket(socket.AF_INET, kind)
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.connect((host, port))
    buf = b"\x5a" * size; end = time.monotonic() + secs; n = 0
    while time.monotonic() < end:
        s.sendall(buf) if proto == "tcp" else s.send(buf); n += 1
    s.close()
    print(n)
PY

# The wire model (src/remote/wire.rs): wire bytes of one message in a stream.
cat > "$WORK/model.py" <<'PY'
import sys, math
proto, size, mtu, ts = sys.argv[1][:3], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] != "0"
frame = lambda ip: 8 + 14 + max(ip, 46) + 4 + 12
if proto == "tcp":
    hdr = 20 + 20 + (12 if ts else 0); mss = mtu - hdr
    print(size * frame(hdr + mss) / mss)
else:
    p = 8 + size
    if 20 + p <= mtu:
        print(frame(20 + p))
    else:
        per = (mtu - 20) // 8 * 8
        print(sum(frame(20 + min(per, p - i * per)) for i in range(math.ceil(p / per))))
PY

printf '%-9s %7s %12s %12s %7s %s\n' proto size 'goodput B/s' 'max B/s' ratio notes
port=5201
CC=$(ip netns exec "$A" sysctl -n net.ipv4.tcp_congestion_control)
for case in "udp 1472" "udp 16384" "tcp 16384" "tcp-cubic 16384" "tcp-bbr 16384"; do
  set -- $case
  proto=$1 size=$2 port=$((port + 1))
  ip netns exec "$B" python3 "$WORK/flow.py" recv "$proto" "$DST" $port "$size" 0 > "$WORK/recv" &
  rpid=$!
  sleep 0.3
  sent=$(ip netns exec "$A" python3 "$WORK/flow.py" send "$proto" "$DST" $port "$size" "$SECS")
  wait $rpid
  read -r got span msgs < "$WORK/recv"
  wire=$(python3 "$WORK/model.py" "$proto" "$size" "$MTU" "$TS")
  python3 - "$proto" "$size" "$got" "$span" "$msgs" "$sent" "$wire" "$RATE_BPS" "$CC" <<'PY'
import sys
proto, size, got, span, msgs, sent, wire, rate, default_cc = sys.argv[1:]
size, got, span, msgs, sent, wire, rate = int(size), int(got), float(span), int(msgs), int(sent), float(wire), int(rate)
goodput = got / span
mx = size * rate / 8 / wire
note = f"{sent - msgs - 1} of {sent} datagrams lost" if proto == "udp" else f"{got} bytes in {span:.2f} s"
if proto == "tcp":
    note += f", {default_cc} (the system's default)"
elif proto.startswith("tcp-"):
    note += f", {proto[4:]}"
print(f"{proto:<9} {size:>7} {goodput:>12.0f} {mx:>12.0f} {goodput / mx:>7.4f} {note}")
PY
done

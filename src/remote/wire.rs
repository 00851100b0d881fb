//! What a message costs on an Ethernet link: the frames it becomes and the
//! bytes those frames take on the wire, and from them the most payload a
//! link of a given speed can carry per second — the figure a remote
//! result's efficiency is measured against (docs/remote.md, "Efficiency
//! against the link").
//!
//! Pure arithmetic: the link's speed, MTU and TCP options are found by
//! `link`; [`limit`] applies it to one figure (the [`LimitFn`] every
//! remote item holds). Only the direction the payload travels is counted: TCP's ACKs
//! go the other way, on the other half of a full-duplex link.

use crate::engine::run::remote::{LinkFacts, WireLimit};
use crate::remote::figures::{Kind, LimitFn};
use crate::remote::task::Proto;

/// Preamble (7) and start-of-frame delimiter (1).
pub const PREAMBLE_SFD: usize = 8;
/// Ethernet header: two addresses and the EtherType.
pub const ETHERNET_HEADER: usize = 14;
/// Frame check sequence.
pub const FCS: usize = 4;
/// The idle time between two frames, in byte times.
pub const INTER_FRAME_GAP: usize = 12;
/// The least a frame carries between its header and its FCS: shorter
/// packets are padded, so that a frame is at least 64 bytes.
pub const MIN_ETHERNET_PAYLOAD: usize = 46;
/// IPv4 header without options.
pub const IPV4_HEADER: usize = 20;
/// TCP header without options.
pub const TCP_HEADER: usize = 20;
/// The TCP timestamps option (RFC 7323) as Linux pads it, in every segment
/// when `net.ipv4.tcp_timestamps` is on.
pub const TCP_TIMESTAMPS: usize = 12;
/// UDP header.
pub const UDP_HEADER: usize = 8;
/// Ethernet's usual MTU.
pub const DEFAULT_MTU: usize = 1500;

/// The link's parameters that shape its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    /// The interface's MTU: the largest IP packet in one frame.
    pub mtu: usize,
    /// Whether TCP segments carry the timestamps option.
    pub tcp_timestamps: bool,
}

impl Default for Wire {
    /// Ethernet's MTU, timestamps on (Linux's default).
    fn default() -> Self {
        Wire {
            mtu: DEFAULT_MTU,
            tcp_timestamps: true,
        }
    }
}

impl Wire {
    /// TCP header with its options.
    pub fn tcp_header(&self) -> usize {
        TCP_HEADER
            + if self.tcp_timestamps {
                TCP_TIMESTAMPS
            } else {
                0
            }
    }

    /// The most payload one TCP segment carries.
    pub fn mss(&self) -> usize {
        self.mtu
            .saturating_sub(IPV4_HEADER + self.tcp_header())
            .max(1)
    }

    /// The most of an IP payload (UDP header and data) one fragment
    /// carries: fragment offsets count 8-byte units.
    pub fn fragment_payload(&self) -> usize {
        (self.mtu.saturating_sub(IPV4_HEADER) / 8 * 8).max(8)
    }
}

/// Bytes on the wire of one frame carrying an IP packet of `ip_len` bytes:
/// preamble and SFD, Ethernet header, the packet padded to 46 bytes, FCS,
/// inter-frame gap.
pub fn frame_wire_bytes(ip_len: usize) -> usize {
    PREAMBLE_SFD + ETHERNET_HEADER + ip_len.max(MIN_ETHERNET_PAYLOAD) + FCS + INTER_FRAME_GAP
}

/// The IP packets (their lengths, headers included) a message of `size`
/// payload bytes becomes when it is sent alone, as in ping-pong: TCP cuts
/// it into segments of at most the MSS, the last one partial; UDP sends one
/// datagram, fragmented above the MTU.
pub fn packets(proto: Proto, size: usize, w: &Wire) -> Vec<usize> {
    match proto {
        Proto::Tcp => {
            let mss = w.mss();
            let header = IPV4_HEADER + w.tcp_header();
            if size == 0 {
                return vec![header];
            }
            (0..size.div_ceil(mss))
                .map(|i| header + (size - i * mss).min(mss))
                .collect()
        }
        Proto::Udp => {
            let ip_payload = UDP_HEADER + size;
            if IPV4_HEADER + ip_payload <= w.mtu {
                return vec![IPV4_HEADER + ip_payload];
            }
            let per = w.fragment_payload();
            (0..ip_payload.div_ceil(per))
                .map(|i| IPV4_HEADER + (ip_payload - i * per).min(per))
                .collect()
        }
    }
}

/// What one message costs on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireCost {
    /// Frames (a saturated TCP stream: the message's share of them, so
    /// possibly fractional).
    pub frames: f64,
    /// Bytes on the wire, every overhead of every frame included (a TCP
    /// stream: the message's share).
    pub wire_bytes: f64,
}

/// The cost of one message of `size` bytes. Alone (`stream` false, as in
/// ping-pong) it is the sum of its own frames. In a saturated stream UDP
/// still sends each message as its own datagram, but TCP cuts the byte
/// stream at the MSS regardless of message boundaries, so each payload
/// byte costs (MSS + per-segment overhead) / MSS wire bytes.
pub fn cost(proto: Proto, size: usize, stream: bool, w: &Wire) -> WireCost {
    if stream && proto == Proto::Tcp && size > 0 {
        let mss = w.mss() as f64;
        let segment = frame_wire_bytes(IPV4_HEADER + w.tcp_header() + w.mss()) as f64;
        let share = size as f64 / mss;
        return WireCost {
            frames: share,
            wire_bytes: share * segment,
        };
    }
    let packets = packets(proto, size, w);
    WireCost {
        frames: packets.len() as f64,
        wire_bytes: packets.iter().map(|&p| frame_wire_bytes(p)).sum::<usize>() as f64,
    }
}

/// The most payload bytes per second a link of `link_bits_per_s` carries
/// in messages of `size` bytes, at 100% use of the link in the payload's
/// direction.
pub fn max_goodput_bytes_per_s(
    proto: Proto,
    size: usize,
    stream: bool,
    link_bits_per_s: u64,
    w: &Wire,
) -> f64 {
    let c = cost(proto, size, stream, w);
    size as f64 * (link_bits_per_s as f64 / 8.0) / c.wire_bytes
}

/// The floor of a ping-pong round trip, ns: the time the message takes to
/// be serialised onto the link one way and its echo the other way, with
/// no propagation, processing or ACKs.
pub fn round_trip_floor_ns(proto: Proto, size: usize, link_bits_per_s: u64, w: &Wire) -> f64 {
    let c = cost(proto, size, false, w);
    2.0 * c.wire_bytes * 8.0 / link_bits_per_s as f64 * 1e9
}

/// The wire model's best for a figure of this model: a stream's maximum
/// goodput, or the serialisation time of a message sent alone (ping-pong
/// and one-way figures are one way: half the round trip's floor).
pub fn limit(proto: Proto, size: usize, kind: &Kind, link: &LinkFacts) -> WireLimit {
    let w = Wire {
        mtu: link.mtu,
        tcp_timestamps: link.tcp_timestamps,
    };
    let stream = matches!(kind, Kind::Stream(_));
    let c = cost(proto, size, stream, &w);
    WireLimit {
        frames_per_message: c.frames,
        wire_bytes_per_message: c.wire_bytes,
        max_bytes_per_s: stream
            .then(|| max_goodput_bytes_per_s(proto, size, true, link.bits_per_s, &w)),
        floor_ns: (!stream).then(|| round_trip_floor_ns(proto, size, link.bits_per_s, &w) / 2.0),
    }
}

// A remote item holds the model as a plain function: checked here, where
// the signature would drift first.
const _: LimitFn = limit;

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_MBIT: u64 = 10_000_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn a_one_byte_datagram_is_one_minimum_frame() {
        // 20 + 8 + 1 = 29 bytes, padded to 46: 8 + 14 + 46 + 4 + 12 = 84.
        let w = Wire::default();
        assert_eq!(packets(Proto::Udp, 1, &w), vec![29]);
        let c = cost(Proto::Udp, 1, false, &w);
        assert_eq!((c.frames, c.wire_bytes), (1.0, 84.0));
        // 10 Mbit/s = 1.25e6 B/s; 1 payload byte per 84.
        assert!(close(
            max_goodput_bytes_per_s(Proto::Udp, 1, false, TEN_MBIT, &w),
            1.25e6 / 84.0
        ));
    }

    #[test]
    fn a_full_datagram_fills_one_frame() {
        // 1472 + 8 + 20 = 1500: one frame of 1538.
        let w = Wire::default();
        assert_eq!(packets(Proto::Udp, 1472, &w), vec![1500]);
        assert_eq!(cost(Proto::Udp, 1472, true, &w).wire_bytes, 1538.0);
        // One byte more: two fragments, 1480 + 1 of the IP payload.
        assert_eq!(packets(Proto::Udp, 1473, &w), vec![1500, 21]);
    }

    #[test]
    fn a_16k_datagram_is_twelve_fragments() {
        // 16392 bytes of IP payload in fragments of 1480: 11 full + 112.
        let w = Wire::default();
        let p = packets(Proto::Udp, 16384, &w);
        assert_eq!(p.len(), 12);
        assert!(p[..11].iter().all(|&l| l == 1500));
        assert_eq!(p[11], 132);
        let c = cost(Proto::Udp, 16384, true, &w);
        assert_eq!(c.wire_bytes, 11.0 * 1538.0 + 170.0);
        assert!(close(
            max_goodput_bytes_per_s(Proto::Udp, 16384, true, TEN_MBIT, &w),
            16384.0 * 1.25e6 / 17088.0
        ));
    }

    #[test]
    fn the_mss_follows_the_mtu_and_timestamps() {
        let mut w = Wire::default();
        assert_eq!(w.mss(), 1448);
        w.tcp_timestamps = false;
        assert_eq!(w.mss(), 1460);
        w.mtu = 9000;
        assert_eq!(w.mss(), 8960);
        assert_eq!(w.fragment_payload(), 8976);
    }

    #[test]
    fn a_tcp_stream_costs_1538_wire_bytes_per_1448() {
        let w = Wire::default();
        for size in [1, 100, 1448, 16384] {
            let c = cost(Proto::Tcp, size, true, &w);
            assert!(close(c.wire_bytes, size as f64 * 1538.0 / 1448.0), "{size}");
            assert!(close(
                max_goodput_bytes_per_s(Proto::Tcp, size, true, TEN_MBIT, &w),
                1.25e6 * 1448.0 / 1538.0
            ));
        }
    }

    #[test]
    fn a_tcp_message_alone_is_cut_at_the_mss() {
        // 16384 = 11 × 1448 + 456: 11 frames of 1538 and one of 456+52+38.
        let w = Wire::default();
        let p = packets(Proto::Tcp, 16384, &w);
        assert_eq!(p.len(), 12);
        assert_eq!(p[11], 456 + 52);
        let c = cost(Proto::Tcp, 16384, false, &w);
        assert_eq!(c.wire_bytes, 11.0 * 1538.0 + 546.0);
        // 1 byte alone: 20 + 32 + 1 = 53 bytes of IP, no padding: 91.
        assert_eq!(cost(Proto::Tcp, 1, false, &w).wire_bytes, 91.0);
        // Without timestamps: 41, padded to 46: the minimum frame.
        let bare = Wire {
            tcp_timestamps: false,
            ..w
        };
        assert_eq!(cost(Proto::Tcp, 1, false, &bare).wire_bytes, 84.0);
    }

    #[test]
    fn the_round_trip_floor_is_both_ways_serialisation() {
        // The docs' worked example: 1024 B over TCP at 10 Mbit/s, alone:
        // 20 + 32 + 1024 = 1076 of IP, 1114 on the wire, 891.2 µs one way.
        let w = Wire::default();
        assert_eq!(cost(Proto::Tcp, 1024, false, &w).wire_bytes, 1114.0);
        assert!(close(
            round_trip_floor_ns(Proto::Tcp, 1024, TEN_MBIT, &w),
            1_782_400.0
        ));
    }

    #[test]
    fn a_figures_limit_is_a_streams_goodput_or_half_a_round_trips_floor() {
        let link = LinkFacts {
            bits_per_s: TEN_MBIT,
            source: "test".into(),
            interface: None,
            mtu: DEFAULT_MTU,
            tcp_timestamps: true,
            shaper: false,
        };
        let w = Wire::default();
        let pp = limit(Proto::Udp, 1, &Kind::PingPong, &link);
        assert_eq!(
            (pp.frames_per_message, pp.wire_bytes_per_message),
            (1.0, 84.0)
        );
        assert_eq!(pp.max_bytes_per_s, None);
        assert!(close(
            pp.floor_ns.unwrap(),
            round_trip_floor_ns(Proto::Udp, 1, TEN_MBIT, &w) / 2.0
        ));
        let stream = Kind::Stream(crate::remote::figures::Direction::Send);
        let st = limit(Proto::Tcp, 65536, &stream, &link);
        assert_eq!(st.floor_ns, None);
        assert!(close(
            st.max_bytes_per_s.unwrap(),
            max_goodput_bytes_per_s(Proto::Tcp, 65536, true, TEN_MBIT, &w)
        ));
    }
}

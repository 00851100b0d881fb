//! The offset of the agent's clock against the client's, from NTP's
//! four-timestamp exchange: the client's clock when it sends (t1), the
//! agent's when it receives (t2) and replies (t3), the client's when the
//! reply arrives (t4). Hosts' clocks are not synchronised, so a one-way
//! figure between them is the agent's receipt less this offset less the
//! client's send.

/// One exchange's estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Agent's clock minus the client's, ns.
    pub offset_ns: f64,
    /// Half the exchange's round trip less the agent's time: the true
    /// offset lies within ± this, whatever the asymmetry of the two paths.
    pub uncertainty_ns: f64,
    /// The client's clock at the middle of the exchange, ns.
    pub at_ns: u64,
}

/// θ = ((t2 − t1) + (t3 − t4)) / 2 and δ = (t4 − t1) − (t3 − t2) of one
/// exchange; `None` for an impossible one (a reply before its request on
/// either clock).
pub fn of_exchange([t1, t2, t3, t4]: [u64; 4]) -> Option<Estimate> {
    if t4 < t1 || t3 < t2 {
        return None;
    }
    let delay = (t4 - t1) as f64 - (t3 - t2) as f64;
    let offset = ((t2 as f64 - t1 as f64) + (t3 as f64 - t4 as f64)) / 2.0;
    Some(Estimate {
        offset_ns: offset,
        uncertainty_ns: delay.max(0.0) / 2.0,
        at_ns: t1 + (t4 - t1) / 2,
    })
}

/// The estimate of the exchange with the shortest round trip (the least
/// room for asymmetry), as NTP's clock filter keeps.
pub fn best(exchanges: &[[u64; 4]]) -> Option<Estimate> {
    exchanges
        .iter()
        .filter_map(|&e| of_exchange(e))
        .min_by(|a, b| a.uncertainty_ns.total_cmp(&b.uncertainty_ns))
}

/// The offset at the client's time `t`, drawn on the line through the
/// estimates before and after the figure (the clocks drift apart slowly
/// and steadily over seconds).
pub fn offset_at(before: &Estimate, after: &Estimate, t: u64) -> f64 {
    if after.at_ns <= before.at_ns {
        return (before.offset_ns + after.offset_ns) / 2.0;
    }
    let f = (t as f64 - before.at_ns as f64) / (after.at_ns - before.at_ns) as f64;
    before.offset_ns + f * (after.offset_ns - before.offset_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symmetric_exchange_gives_the_true_offset() {
        // The agent's clock is 1000 ns ahead; 50 ns each way, 10 ns inside.
        let e = of_exchange([100, 1150, 1160, 210]).unwrap();
        assert_eq!(e.offset_ns, 1000.0);
        assert_eq!(e.uncertainty_ns, 50.0);
    }

    #[test]
    fn the_shortest_round_trip_wins_and_bounds_the_error() {
        // True offset −500: an asymmetric slow exchange is off by 200 but
        // says so; the fast one is kept.
        // Slow: 600 ns there, 200 back, 10 inside; fast: 20, 20 and 5.
        let slow = [0, 100, 110, 810];
        let fast = [1000, 520, 525, 1045];
        let b = best(&[slow, fast]).unwrap();
        assert_eq!(b.offset_ns, -500.0);
        assert!(b.uncertainty_ns <= 20.0);
        for e in [slow, fast] {
            let e = of_exchange(e).unwrap();
            assert!((e.offset_ns - -500.0).abs() <= e.uncertainty_ns);
        }
    }

    #[test]
    fn impossible_exchanges_are_left_out_and_drift_is_interpolated() {
        assert_eq!(of_exchange([10, 5, 4, 20]), None);
        assert_eq!(best(&[[10, 5, 4, 20]]), None);
        let b = Estimate {
            offset_ns: 100.0,
            uncertainty_ns: 1.0,
            at_ns: 0,
        };
        let a = Estimate {
            offset_ns: 200.0,
            ..b
        };
        let a = Estimate { at_ns: 1000, ..a };
        assert_eq!(offset_at(&b, &a, 500), 150.0);
    }
}

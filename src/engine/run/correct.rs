//! Figures corrected for the interrupt time accounted while they were
//! measured under a load (the RTOS study's §5), beside the raw ones:
//!
//! - an operation figure (modes op, event, pingpong): T' = T − I / ops,
//!   where I / ops, the interrupt time that fell in the samples per
//!   operation, is f · T with f the interrupt time accounted on the
//!   figure's CPUs per unit of its window (interrupts landing evenly over
//!   the window: the samples' share of it took f of their time);
//! - a score (Thread-Metric): S' = S + Ω · S_int, with Ω = t_int / t_op,
//!   t_int the time of one interrupt's handling (interrupt time ÷
//!   interrupts counted on the test's CPU) and t_op the time of one
//!   counted operation (the period less its interrupt time, ÷ S), both
//!   from this figure; S_int the interrupts of the counting period; and
//!   R' = S' / H with H the baseline's rate as measured.
//!
//! The record and its two computations; `run::under_load` applies them to
//! a run's figures. With no interrupt time accounted both are the identity, exactly. A
//! correction that would reach or pass zero (f ≥ 1) is reported as such,
//! with no corrected figure: never clamped.

/// Whether a correction gave a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Corrected.
    Ok,
    /// The interrupt time accounted is the whole window or more: the
    /// correction would reach or pass zero, so there is no corrected figure.
    PassesZero,
}

/// A figure's correction, with its inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    /// The CPUs whose interrupt time was accounted (the figure's).
    pub cpus: Vec<usize>,
    /// The window the accounting covers, ns.
    pub window_ns: u64,
    /// Interrupt time accounted on those CPUs in the window, ns (summed).
    pub interrupt_ns: u64,
    /// f: `interrupt_ns` ÷ (window × CPUs).
    pub fraction: f64,
    /// Whether it gave a figure.
    pub status: Status,
    /// The correction of the figure's kind.
    pub kind: Corrected,
}

/// The two kinds of correction.
#[derive(Debug, Clone, PartialEq)]
pub enum Corrected {
    /// An operation figure: T' = T − f · T.
    Time {
        /// T: the figure's median time per operation, ns.
        measured_ns: f64,
        /// f · T: interrupt time per operation, ns.
        interrupt_ns_per_op: f64,
        /// T', ns; `None` when it would reach or pass zero.
        corrected_ns: Option<f64>,
    },
    /// A score: S' = S + Ω · S_int, R' = S' / H.
    Score {
        /// S: operations counted in the period.
        operations: u64,
        /// The period's measured length, ns.
        elapsed_ns: u64,
        /// Interrupts counted on the test's CPU in the window (all
        /// /proc/interrupts lines).
        interrupts_in_window: u64,
        /// S_int: those interrupts scaled to the counting period.
        s_int: f64,
        /// t_int: time of one interrupt's handling, ns; `None` without interrupts.
        t_int_ns: Option<f64>,
        /// t_op: time of one counted operation, period less its interrupt time, ns.
        t_op_ns: Option<f64>,
        /// Ω = t_int / t_op.
        omega: Option<f64>,
        /// S'; `None` when it would pass zero's mirror (f ≥ 1).
        corrected_operations: Option<f64>,
        /// S' per second of the period.
        corrected_ops_per_s: Option<f64>,
        /// R' = S' / H (rates), filled once the baseline is known.
        corrected_relative_to_baseline: Option<f64>,
    },
}

/// T' = T − f · T for a measured time per operation.
pub fn correct_time(measured_ns: f64, f: f64) -> (Status, Corrected) {
    let per_op = f * measured_ns;
    let status = if f >= 1.0 {
        Status::PassesZero
    } else {
        Status::Ok
    };
    (
        status,
        Corrected::Time {
            measured_ns,
            interrupt_ns_per_op: per_op,
            corrected_ns: (status == Status::Ok).then_some(measured_ns - per_op),
        },
    )
}

/// S' = S + Ω · S_int for `operations` in `elapsed_ns`, with the interrupt
/// time `interrupt_ns` and `interrupts` counted in a window of `window_ns`.
pub fn correct_score(
    operations: u64,
    elapsed_ns: u64,
    interrupt_ns: u64,
    interrupts: u64,
    window_ns: u64,
) -> (Status, Corrected) {
    let f = if window_ns > 0 {
        interrupt_ns as f64 / window_ns as f64
    } else {
        0.0
    };
    let status = if f >= 1.0 {
        Status::PassesZero
    } else {
        Status::Ok
    };
    let s = operations as f64;
    let e = elapsed_ns as f64;
    let s_int = if window_ns > 0 {
        interrupts as f64 * e / window_ns as f64
    } else {
        0.0
    };
    let t_int = (interrupts > 0).then(|| interrupt_ns as f64 / interrupts as f64);
    let t_op = (operations > 0 && status == Status::Ok).then(|| e * (1.0 - f) / s);
    let omega = t_int.zip(t_op).map(|(i, o)| i / o);
    let corrected = match status {
        Status::PassesZero => None,
        // No interrupt counted: nothing to credit.
        Status::Ok => Some(s + omega.map_or(0.0, |w| w * s_int)),
    };
    (
        status,
        Corrected::Score {
            operations,
            elapsed_ns,
            interrupts_in_window: interrupts,
            s_int,
            t_int_ns: t_int,
            t_op_ns: t_op,
            omega,
            corrected_operations: corrected,
            corrected_ops_per_s: corrected.filter(|_| e > 0.0).map(|c| c * 1e9 / e),
            corrected_relative_to_baseline: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_interrupt_time_is_the_identity_exactly() {
        for t in [0.5, 87.0, 2012.0, 1e6] {
            let (status, c) = correct_time(t, 0.0);
            assert_eq!(status, Status::Ok);
            assert_eq!(
                c,
                Corrected::Time {
                    measured_ns: t,
                    interrupt_ns_per_op: 0.0,
                    corrected_ns: Some(t)
                }
            );
        }
        for interrupts in [0, 40] {
            let (status, c) = correct_score(123_456, 2_000_000_000, 0, interrupts, 2_100_000_000);
            assert_eq!(status, Status::Ok);
            let Corrected::Score {
                corrected_operations,
                corrected_ops_per_s,
                ..
            } = c
            else {
                panic!("{c:?}")
            };
            assert_eq!(corrected_operations, Some(123_456.0), "{interrupts}");
            assert_eq!(corrected_ops_per_s, Some(61_728.0));
        }
    }

    #[test]
    fn a_correction_never_gives_a_negative_figure() {
        // Over fractions from none to more than the whole window: either a
        // figure between 0 and the raw one, or none, said so.
        for k in 0..=120 {
            let f = k as f64 / 100.0;
            for t in [1.0, 950.0, 40_000.0] {
                match correct_time(t, f) {
                    (
                        Status::Ok,
                        Corrected::Time {
                            corrected_ns: Some(c),
                            ..
                        },
                    ) => {
                        assert!(c > 0.0 && c <= t, "f {f}: {c}")
                    }
                    (
                        Status::PassesZero,
                        Corrected::Time {
                            corrected_ns: None, ..
                        },
                    ) => {
                        assert!(f >= 1.0, "f {f}")
                    }
                    other => panic!("f {f}: {other:?}"),
                }
            }
            let window = 1_000_000_000u64;
            let (status, c) = correct_score(5000, window, (f * window as f64) as u64, 4000, window);
            let Corrected::Score {
                corrected_operations,
                omega,
                ..
            } = c
            else {
                panic!()
            };
            match status {
                Status::Ok => {
                    let s2 = corrected_operations.unwrap();
                    assert!(s2 >= 5000.0, "f {f}: S' {s2} below S");
                    assert!(omega.unwrap() >= 0.0);
                }
                Status::PassesZero => {
                    assert!(f >= 1.0);
                    assert_eq!(corrected_operations, None);
                }
            }
        }
    }

    #[test]
    fn the_score_credit_is_the_interrupt_time_in_operations() {
        // 10% of the period on interrupts: S' = S / (1 − 0.1), and Ω is the
        // ratio of one interrupt's handling to one operation.
        let (_, c) = correct_score(9000, 1_000_000_000, 100_000_000, 1000, 1_000_000_000);
        let Corrected::Score {
            corrected_operations,
            t_int_ns,
            t_op_ns,
            omega,
            s_int,
            ..
        } = c
        else {
            panic!()
        };
        assert_eq!(t_int_ns, Some(100_000.0));
        assert!((t_op_ns.unwrap() - 100_000.0).abs() < 1e-6);
        assert!((omega.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(s_int, 1000.0);
        assert!((corrected_operations.unwrap() - 10_000.0).abs() < 1e-6);
    }
}

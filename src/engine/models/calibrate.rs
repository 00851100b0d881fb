//! Warm-up and calibration, shared by every timing model that runs batches.

/// Runs batches of 1, 2, 4 … iterations until a batch lasts at least ⅛ of
/// `warm_ns` and the batches together at least `warm_ns`, and returns the time
/// per iteration of the last batch and the iterations run. `batch(n)` runs
/// `n` iterations and returns their duration in ns; `between` runs before each
/// batch (e.g. a stop check for loops that never block).
pub fn warm_up<E>(
    warm_ns: u64,
    mut between: impl FnMut() -> Result<(), E>,
    mut batch: impl FnMut(u64) -> Result<u64, E>,
) -> Result<(f64, u64), E> {
    let (mut n, mut spent, mut done) = (1u64, 0u64, 0u64);
    loop {
        between()?;
        let t = batch(n)?;
        done += n;
        spent += t;
        if spent >= warm_ns && t >= warm_ns / 8 {
            return Ok((t as f64 / n as f64, done));
        }
        if t < warm_ns / 4 {
            n *= 2;
        }
    }
}

/// Iterations per sample so that one sample lasts about `sample_ns`.
pub fn iterations_for(sample_ns: u64, per_iter_ns: f64) -> u64 {
    ((sample_ns as f64 / per_iter_ns.max(1.0)).ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_until_long_enough_then_reports_the_last_batch() {
        // Every iteration "takes" 10 ns: batches double until one lasts ≥ 125 ns
        // (⅛ of 1000) and the total reaches 1000.
        let mut sizes = Vec::new();
        let (per, done) = warm_up::<()>(
            1000,
            || Ok(()),
            |n| {
                sizes.push(n);
                Ok(n * 10)
            },
        )
        .unwrap();
        assert_eq!(per, 10.0);
        assert_eq!(sizes, [1, 2, 4, 8, 16, 32, 32, 32]);
        assert_eq!(done, sizes.iter().sum::<u64>());
        assert_eq!(iterations_for(40_000_000, 10.0), 4_000_000);
        assert_eq!(iterations_for(10, 1e9), 1);
    }
}

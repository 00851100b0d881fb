//! The checks Thread-Metric's reporting threads make on the counters, used
//! as the [`Check`](crate::engine::models::score::Check) of the tests whose
//! threads take strict turns.

/// Thread-Metric's relative-counter check: every counter within 1 of the
/// (integer) average of all of them. Cooperative threads taking turns
/// strictly pass it; an unfair schedule fails it.
pub fn within_one_of_average(counters: &[u64]) -> Result<(), String> {
    if counters.is_empty() {
        return Ok(());
    }
    let average = counters.iter().sum::<u64>() / counters.len() as u64;
    match counters
        .iter()
        .position(|&c| c + 1 < average || c > average + 1)
    {
        None => Ok(()),
        Some(i) => Err(format!(
            "counter {i} is {}, more than 1 from the average {average}",
            counters[i]
        )),
    }
}

/// The order check of a chain of strict priorities: the counters, most
/// urgent first, never increase along the list, and the first is at most 1
/// above the last (each turn every link counts once, most urgent first).
pub fn descending_by_at_most_one(counters: &[u64]) -> Result<(), String> {
    for i in 1..counters.len() {
        if counters[i] > counters[i - 1] {
            return Err(format!(
                "counter {i} ({}) ran ahead of the more urgent counter {} ({})",
                counters[i],
                i - 1,
                counters[i - 1]
            ));
        }
    }
    match (counters.first(), counters.last()) {
        (Some(&first), Some(&last)) if first > last + 1 => Err(format!(
            "the most urgent counter ({first}) is more than 1 ahead of the least ({last})"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_turns_pass_and_an_unfair_schedule_fails() {
        assert!(within_one_of_average(&[7, 7, 7, 7, 7]).is_ok());
        assert!(within_one_of_average(&[8, 8, 7, 7, 7]).is_ok());
        assert!(within_one_of_average(&[0, 0, 0, 0, 0]).is_ok());
        assert!(within_one_of_average(&[1, 0, 0, 0, 0]).is_ok());
        // One thread ran twice as often as its peers.
        let e = within_one_of_average(&[20, 10, 10, 10, 10]).unwrap_err();
        assert!(e.contains("counter 0 is 20"), "{e}");
        // A thread that never ran.
        assert!(within_one_of_average(&[0, 5, 5, 5, 5]).is_err());
    }

    #[test]
    fn order_check_accepts_a_chain_and_rejects_an_inversion() {
        assert!(descending_by_at_most_one(&[5, 5, 5, 5, 5]).is_ok());
        assert!(descending_by_at_most_one(&[6, 6, 5, 5, 5]).is_ok());
        assert!(descending_by_at_most_one(&[5, 6, 5, 5, 5]).is_err());
        assert!(descending_by_at_most_one(&[7, 6, 6, 5, 5]).is_err());
        assert!(descending_by_at_most_one(&[7, 6]).is_ok());
    }
}

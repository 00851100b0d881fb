//! `--rates`: the offered rates of mode rate, as a list or `sweep`.

use crate::engine::models::rate::{Rates, SWEEP_LAST};

/// What `--rates` allows, for every error's message.
fn allowed() -> String {
    format!(
        "expected `sweep` or messages a second, comma-separated, each with an optional k \
         (×1000) or M (×10⁶), above 0 and at most {}M (e.g. 1k,10k,250k,1.5M)",
        SWEEP_LAST / 1e6
    )
}

/// `--rates` value parser: `sweep`, or a comma-separated list of offered
/// rates in messages a second, each with an optional k or M, above 0 and
/// at most [`SWEEP_LAST`] (the sweep's own highest rate: the sender's
/// stores and schedule are sized for it); sorted increasing, repeats dropped.
pub fn rates_arg(s: &str) -> Result<Rates, String> {
    let t = s.trim();
    if t == "sweep" {
        return Ok(Rates::Sweep);
    }
    let mut rates = Vec::new();
    for part in t.split(',') {
        let p = part.trim();
        if p.is_empty() {
            return Err(format!(
                "invalid rates '{s}': an empty entry; {}",
                allowed()
            ));
        }
        rates.push(offered_rate(p).map_err(|why| format!("{why}; {}", allowed()))?);
    }
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    Ok(Rates::List(rates))
}

/// One offered rate: a number with an optional k or M.
fn offered_rate(p: &str) -> Result<f64, String> {
    let (num, mult) = if let Some(n) = p.strip_suffix(['k', 'K']) {
        (n, 1e3)
    } else if let Some(n) = p.strip_suffix('M') {
        (n, 1e6)
    } else {
        (p, 1.0)
    };
    // f64's parser takes "inf" and "NaN": only a finite number is a rate.
    let v: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("invalid rate '{p}'"))?;
    let r = v * mult;
    if r <= 0.0 || r > SWEEP_LAST {
        return Err(format!("rate '{p}' is out of range"));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_sorted_once_each_with_its_suffixes() {
        assert_eq!(
            rates_arg("250k,1k,10k,1.5M,1000"),
            Ok(Rates::List(vec![1e3, 1e4, 2.5e5, 1.5e6]))
        );
        assert_eq!(rates_arg(" 2K , 500 "), Ok(Rates::List(vec![500.0, 2e3])));
        assert_eq!(rates_arg("sweep"), Ok(Rates::Sweep));
        assert_eq!(rates_arg("16.384M"), Ok(Rates::List(vec![SWEEP_LAST])));
    }

    #[test]
    fn a_bad_rate_names_itself_and_what_is_allowed() {
        for bad in [
            "0", "abc", "-5k", "20M", "1k,,2k", "inf", "NaN", "1m", "5G", "",
        ] {
            let e = rates_arg(bad).expect_err(bad);
            assert!(e.contains("at most 16.384M"), "{bad}: {e}");
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
        assert!(
            rates_arg("abc")
                .unwrap_err()
                .starts_with("invalid rate 'abc'")
        );
        assert!(
            rates_arg("1k,0")
                .unwrap_err()
                .starts_with("rate '0' is out of range")
        );
    }
}

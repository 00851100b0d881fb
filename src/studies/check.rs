//! A run judged against a baseline (`ipcmark check`): the two runs opened
//! as their records (a run of the history, a name given with `history
//! --tag`, or a JSON report), compared (`analysis::compare`) and the
//! comparison judged (`analysis::check`). The caller words a spec that
//! gave no run (`history::Refused`) and decides the exit code from
//! [`CheckReport::passed`].

use crate::history::{Refused, open_run};
use crate::record::build::BuildRecord;
use crate::record::check::CheckReport;
use std::path::Path;

/// What to check.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The history the specs name runs of (none: the default one).
    pub db: Option<&'a Path>,
    /// The baseline's spec.
    pub baseline: &'a str,
    /// The spec of the run checked against it.
    pub run: &'a str,
    /// The largest slowdown of a figure allowed, beyond the common shift.
    pub max_regression: f64,
    /// The significance level of each figure's test.
    pub alpha: f64,
    /// The build the report says wrote it.
    pub build: BuildRecord,
}

/// `ipcmark check`: the run against the baseline, judged.
pub fn check(req: &Request) -> Result<CheckReport, Refused> {
    let (la, a) = open_run(req.db, req.baseline)?;
    let (lb, b) = open_run(req.db, req.run)?;
    let compared =
        crate::analysis::compare::compare(&la, &a, &lb, &b, req.alpha, req.build.clone());
    Ok(crate::analysis::check::check(
        compared,
        req.max_regression,
        req.build.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::history::{OpenError, Opened, StoredRun};

    fn request<'a>(db: &'a Path, baseline: &'a str, run: &'a str) -> Request<'a> {
        Request {
            db: Some(db),
            baseline,
            run,
            max_regression: 0.05,
            alpha: 0.05,
            build: fixture("passes").header.build,
        }
    }

    #[test]
    fn a_run_slower_in_one_figure_fails_its_check_and_the_same_run_passes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        let base = fixture("passes");
        // Only the first figure slower, by half: beyond any common shift.
        let slower = scaled(&base, |i| if i == 0 { 1.5 } else { 1.0 });
        super::super::tests::store(&db, &[base.clone(), base, slower]);
        let same = check(&request(&db, "1", "2")).unwrap();
        assert!(same.passed, "{same:?}");
        let worse = check(&request(&db, "1", "last")).unwrap();
        assert!(!worse.passed, "{worse:?}");
    }

    #[test]
    fn a_spec_that_names_no_run_is_refused_with_what_it_gave() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite");
        super::super::tests::store(&db, &[fixture("passes")]);
        let Err(r) = check(&request(&db, "1", "7")) else {
            panic!("run 7 was found")
        };
        assert_eq!(r.spec, "7");
        assert!(matches!(r.opened, Err(OpenError::History(_))));
        let workload = dir.path().join("w.json");
        std::fs::write(&workload, crate::record::workload::tests::FIXTURES[0].1).unwrap();
        let Err(r) = check(&request(&db, workload.to_str().unwrap(), "1")) else {
            panic!("a workload was checked")
        };
        assert!(matches!(
            r.opened,
            Ok(Opened {
                run: StoredRun::Workload(_),
                ..
            })
        ));
    }
}

//! A workload's title (the first line of its tables) read from its
//! resolved settings as its report keeps them (`parameters`, the run's
//! length): the run prints it and `ipcmark show` prints it of a stored
//! report, from the same values, so the two pages are the same bytes.
//! Locally and across MPI ranks (`"engine": "mpi"` in the parameters).

use serde_json::Value;

/// The title of workload `id` run with `parameters` (as its `parameters()`
/// wrote them) for `duration_ms` (a timed workload's run); `None` when the
/// parameters are not the workload's (another version's report).
pub fn of(id: &str, parameters: &Value, duration_ms: Option<f64>) -> Option<String> {
    let p = Params(parameters);
    let mpi = parameters.get("engine").and_then(Value::as_str) == Some("mpi");
    let handoff = parameters.get("handoff_every").and_then(Value::as_u64);
    let mut t = match id {
        "philosophers" => {
            let (n, think, eat) = (p.u("philosophers")?, p.f("think_ms")?, p.f("eat_ms")?);
            let seconds = duration_ms? / 1e3;
            match mpi {
                false => format!(
                    "philosophers: {n} philosophers, {} forks, think {think} ms, eat {eat} ms of CPU work, {seconds} s per run",
                    p.s("mechanism")?
                ),
                true => format!(
                    "philosophers across MPI ranks: {n} philosophers, forks kept by an arbiter rank, think {think} ms, eat {eat} ms of CPU work, {seconds} s per run"
                ),
            }
        }
        "generator-calculator" => {
            let (vector, bytes, ops) = (p.u("vector")?, p.u("message_bytes")?, p.u("ops")?);
            let prefix = match mpi {
                false => "generator-calculator",
                true => "generator-calculator across MPI ranks",
            };
            let how = match mpi {
                false => "two pipes",
                true => "MPI_Send/MPI_Recv",
            };
            format!(
                "{prefix}: vectors of {vector} element(s) ({bytes} B messages), {ops} operations, {how}"
            )
        }
        "shared-counter" => {
            let elements = p.u("elements")? as usize;
            let (threshold, passes) = (p.u("threshold")?, p.u("passes")?);
            let array = super::shared_counter::human_bytes(4 * elements);
            let mut t = match mpi {
                false => format!(
                    "shared-counter: {array} array ({elements} element(s)), threshold {threshold} ({passes} passes), {} lock",
                    p.s("mechanism")?
                ),
                true => format!(
                    "shared-counter across MPI ranks: {array} array ({elements} element(s)) in an MPI window, threshold {threshold} ({passes} passes), MPI_Win_lock exclusive"
                ),
            };
            let pause = p.f("pause_ms")?;
            if pause != 0.0 {
                t.push_str(&format!(", {pause} ms pause after each pass"));
            }
            t
        }
        _ => return None,
    };
    if let (true, Some(k)) = (mpi, handoff) {
        t.push_str(&match id {
            "philosophers" => {
                format!(", each philosopher handed to its next spare rank every {k} meals")
            }
            "generator-calculator" => {
                format!(", calculator handed to the next rank every {k} vectors")
            }
            _ => format!(", each counter handed to its next spare rank every {k} passes"),
        });
    }
    Some(t)
}

/// The parameters' fields by name.
struct Params<'a>(&'a Value);

impl Params<'_> {
    fn u(&self, name: &str) -> Option<u64> {
        self.0.get(name)?.as_u64()
    }
    fn f(&self, name: &str) -> Option<f64> {
        self.0.get(name)?.as_f64()
    }
    fn s(&self, name: &str) -> Option<&str> {
        self.0.get(name)?.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_titles_itself_from_its_parameters() {
        let philosophers = serde_json::json!({
            "philosophers": 5, "mechanism": "sysv-sem", "think_ms": 1.0, "eat_ms": 2.5,
        });
        assert_eq!(
            of("philosophers", &philosophers, Some(300.0)).unwrap(),
            "philosophers: 5 philosophers, sysv-sem forks, think 1 ms, eat 2.5 ms of CPU work, 0.3 s per run"
        );
        let counter = serde_json::json!({
            "elements": 1000, "threshold": 4000, "passes": 4, "mechanism": "futex",
            "pause_ms": 0.0, "engine": "mpi", "handoff_every": 2,
        });
        assert_eq!(
            of("shared-counter", &counter, None).unwrap(),
            "shared-counter across MPI ranks: 4 KB array (1000 element(s)) in an MPI window, threshold 4000 (4 passes), MPI_Win_lock exclusive, each counter handed to its next spare rank every 2 passes"
        );
        let calc = serde_json::json!({"vector": 3, "message_bytes": 12, "ops": 10});
        assert_eq!(
            of("generator-calculator", &calc, None).unwrap(),
            "generator-calculator: vectors of 3 element(s) (12 B messages), 10 operations, two pipes"
        );
        // Parameters of another version, or another workload: no title.
        assert_eq!(of("philosophers", &calc, Some(1.0)), None);
        assert_eq!(of("nobody", &calc, None), None);
    }
}

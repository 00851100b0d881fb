//! `ipcmark explain dbus`: the private `dbus-daemon` that relays every call
//! and reply is traced, and its time is parts of the round trip ("broker
//! …"), not residual. Needs root, tracefs and `dbus-daemon`: without them
//! the test says why it is skipped. No test asserts a time.

use crate::util::*;

#[test]
fn the_brokers_relaying_is_a_part_of_a_dbus_round_trip() {
    let _g = serial();
    if !have_dbus_daemon() {
        return;
    }
    let Some(_tracing) = tracing_or_skip("the_brokers_relaying_is_a_part_of_a_dbus_round_trip")
    else {
        return;
    };
    let sb = Sandbox::new();
    let argv = [
        "dbus",
        "--quick",
        "--passes",
        "1",
        "--sizes",
        "64",
        "--no-save",
    ];
    let (text, report) = explained(&sb, &argv, "anatomy of a round trip");
    assert!(text.contains("broker "), "{text}");
    let ex = &results(&report)[0]["explain"];
    assert_eq!(ex["method"], "full", "{ex}");
    let parts = ex["parts"].as_array().expect("explain.parts");
    let broker: f64 = parts
        .iter()
        .filter(|p| p["name"].as_str().unwrap().starts_with("broker "))
        .map(|p| p["mean_ns"].as_f64().unwrap())
        .sum();
    assert!(broker > 0.0, "no broker part with time: {ex}");
    // The parts' means still add up to the traced mean round trip.
    let sum: f64 = parts.iter().map(|p| p["mean_ns"].as_f64().unwrap()).sum();
    let mean = ex["traced_round_trip_ns"]["mean"].as_f64().unwrap();
    assert!((sum - mean).abs() <= 1e-6 * mean, "{sum} vs {mean}");
    // The note says which task was traced as the broker.
    let note = ex["note"].as_str().expect("explain.note");
    assert!(
        note.contains("broker: the private dbus-daemon, pid ") && note.contains("traced"),
        "{note}"
    );
}

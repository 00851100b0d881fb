//! Test helpers for mechanisms: drive both ends of a channel in one thread.

use crate::engine::channel::{Channel, Mechanism, OpenContext};
use crate::engine::message::fill_pattern;
use crate::engine::os::objects::ObjectNamer;

/// Opens `mech` for `size`-byte messages, as for a thread peer.
pub fn open(mech: &dyn Mechanism, size: usize) -> Channel {
    let names = ObjectNamer::new();
    let ctx = OpenContext {
        timeout: std::time::Duration::from_secs(5),
        size,
        names: &names,
    };
    mech.open(&ctx)
        .unwrap_or_else(|e| panic!("{} at {size} B: {e}", mech.info().id))
}

/// Sends one patterned message each way through `ch` without a second thread
/// (fine while one message fits in the channel) and checks it came back whole.
pub fn echo_once(ch: &mut Channel, size: usize) {
    let mut msg = vec![0u8; size];
    fill_pattern(&mut msg, 42);
    let mut at_server = vec![0u8; size];
    let mut back = vec![0u8; size];
    let server = ch.server.as_mut().expect("a peer mechanism");
    ch.client.send(&msg).unwrap();
    server.recv(&mut at_server).unwrap();
    server.send(&at_server).unwrap();
    ch.client.recv(&mut back).unwrap();
    assert_eq!(msg, back);
}

/// Opens `mech`, echoes one message of each size, drops the channel.
pub fn echo_sizes(mech: &dyn Mechanism, sizes: &[usize]) {
    for &size in sizes {
        let mut ch = open(mech, size);
        echo_once(&mut ch, size);
    }
}

/// Opens `mech`'s stream channel for `size`-byte messages, as for a thread peer.
pub fn open_stream(mech: &dyn Mechanism, size: usize) -> Channel {
    let names = ObjectNamer::new();
    let ctx = OpenContext {
        timeout: std::time::Duration::from_secs(5),
        size,
        names: &names,
    };
    mech.open_stream(&ctx)
        .unwrap_or_else(|e| panic!("{} stream at {size} B: {e}", mech.info().id))
}

//! Test helpers for mechanisms: drive both ends of a channel in one thread.

use crate::engine::channel::{Channel, Mechanism, OpenContext, PeerIdentity};
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

/// Echoes `rounds` patterned messages of each size through `mech` by
/// lending: a thread answers each message where it lies (its first byte
/// complemented) and sends it back in place; the client reads every byte
/// of each reply where it lies and gives it back. More rounds than a pool
/// holds prove that every loan comes back.
pub fn echo_lent(mech: &dyn Mechanism, sizes: &[usize], rounds: u64) {
    for &size in sizes {
        let ch = open(mech, size);
        let (mut client, mut server) = (ch.client, ch.server.expect("a peer mechanism"));
        assert!(client.lends() && server.lends(), "{} lends", mech.info().id);
        // Both ends in this process (a thread peer's case).
        let me = PeerIdentity {
            pid: crate::sys::process::getpid(),
            tid: crate::sys::process::gettid(),
        };
        client.attach(me).unwrap();
        server.attach(me).unwrap();
        let echo = std::thread::spawn(move || {
            for _ in 0..rounds {
                let msg = server.lend().unwrap();
                msg[0] = !msg[0];
                server.send_lent().unwrap();
            }
            // Nothing is lent once it has been sent back.
            assert!(server.send_lent().is_err() && server.release().is_err());
        });
        let (mut msg, mut want) = (vec![0u8; size], vec![0u8; size]);
        for seq in 0..rounds {
            fill_pattern(&mut msg, seq);
            want.copy_from_slice(&msg);
            want[0] = !want[0];
            client.send(&msg).unwrap();
            let reply = client.lend().unwrap();
            assert!(reply == &want[..], "size {size} message {seq}");
            client.release().unwrap();
        }
        echo.join().unwrap();
    }
}

//! A remote run's items: the tcp and udp items of a run's plan, measured
//! against the agent instead of a local peer, as the engine's `External`
//! items ([`RemoteFigures`]).
//!
//! Two steps, because a run refuses a plan it cannot measure remotely
//! before it connects to anything: [`choose`] picks the items from the plan
//! (every refusal a usage error), then, once the agent is connected,
//! [`external`] makes them the session's items.

use crate::engine::run::remote::LinkFacts;
use crate::engine::run::session::Item;
use crate::remote::figures::{Direction, Kind, NO_CPU, RemoteFigures, SharedControl};
use crate::remote::frame;
use crate::remote::task::{MAX_ONEWAY_MESSAGES, Proto, STAMP_JSON_BYTES};
use crate::remote::wire;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

/// One item of the plan that runs against the agent.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// Its transport.
    pub proto: Proto,
    /// Its timing model.
    pub kind: Kind,
    /// The sizes the plan gave it.
    pub sizes: Vec<usize>,
}

/// The items of a plan that a remote run measures against the agent, a
/// stream flowing `direction`. Refused (each error a usage error): an item
/// that is not a mechanism's ping-pong, stream or one-way figures; a
/// mechanism other than tcp and udp when the names were given (`explicit`),
/// which is otherwise left out; a one-way figure of more messages than the
/// agent's report can carry.
pub fn choose(
    items: Vec<(Item, Vec<usize>)>,
    direction: Direction,
    explicit: bool,
) -> Result<Vec<Chosen>, String> {
    let mut chosen = Vec::new();
    for (item, sizes) in items {
        let (mech, kind) = match item {
            Item::PingPong(m, _) => (m, Kind::PingPong),
            Item::Stream(m, _) => (m, Kind::Stream(direction)),
            Item::OneWay(m, p) => (m, Kind::OneWay(p)),
            other => {
                return Err(format!(
                    "--remote runs tcp and udp against the agent; '{}' runs on one host",
                    other.id()
                ));
            }
        };
        let proto = match Proto::of_mechanism(mech.info().id) {
            Some(p) => p,
            None if explicit => {
                return Err(format!(
                    "--remote runs tcp and udp against the agent; '{}' runs on one host",
                    mech.info().id
                ));
            }
            None => continue,
        };
        if let Kind::OneWay(p) = &kind
            && p.messages > MAX_ONEWAY_MESSAGES
        {
            return Err(format!(
                "--remote: a one-way figure times at most {MAX_ONEWAY_MESSAGES} messages (the \
                 agent's report, a stamp of up to {STAMP_JSON_BYTES} bytes per message, must fit \
                 a {} MiB control frame), not {}: lower --messages (or --window, on which \
                 its default depends)",
                frame::MAX_FRAME >> 20,
                p.messages
            ));
        }
        chosen.push(Chosen { proto, kind, sizes });
    }
    Ok(chosen)
}

/// The session's items for `chosen`, each measured against the agent
/// through `control` (one session shared by all), over `link` when its
/// speed is known, the agent's side on `agent_cpu`. Refused (a usage
/// error) when nothing was chosen: such a run would measure nothing.
pub fn external(
    chosen: Vec<Chosen>,
    control: SharedControl,
    link: Option<LinkFacts>,
    agent_cpu: Option<usize>,
) -> Result<Vec<(Item, Vec<usize>)>, String> {
    if chosen.is_empty() {
        return Err(
            "--remote runs tcp and udp against the agent: name one of them (or none for both)"
                .into(),
        );
    }
    Ok(chosen
        .into_iter()
        .map(|c| {
            // One per item, held by the plan for the whole run.
            let figures = Arc::new(RemoteFigures {
                proto: c.proto,
                kind: c.kind,
                control: Arc::clone(&control),
                link: link.clone(),
                limit: wire::limit,
                agent_cpu,
                client_cpu: AtomicUsize::new(NO_CPU),
            });
            (Item::External(figures), c.sizes)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::channel::{
        Channel, ChannelError, Mechanism, MechanismInfo, OpenContext, Payload, Topology,
    };
    use crate::engine::models::oneway::OneWayPlan;
    use crate::remote::data::DataKey;
    use crate::remote::figures::Control;
    use crate::remote::task::{Report, Task};
    use std::net::SocketAddr;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A mechanism known by its id only: choosing never opens one.
    struct Named(&'static str);

    impl Mechanism for Named {
        fn info(&self) -> MechanismInfo {
            MechanismInfo {
                id: self.0,
                summary: "a test's mechanism",
                payload: Payload::Bytes,
                topology: Topology::Peer,
                spins: false,
            }
        }
        fn open(&self, _: &OpenContext) -> Result<Channel, ChannelError> {
            unreachable!("choosing items opens no channel")
        }
    }

    static TCP: Named = Named("tcp");
    static UDP: Named = Named("udp");
    static PIPE: Named = Named("pipe");

    fn oneway(messages: u64) -> OneWayPlan {
        OneWayPlan {
            interval: None,
            messages,
            window: 10,
            max_time: Duration::from_secs(1),
        }
    }

    #[test]
    fn tcp_and_udp_are_chosen_in_their_models_and_other_mechanisms_left_out() {
        let items = vec![
            (Item::PingPong(&TCP, false), vec![1, 64]),
            (Item::PingPong(&PIPE, false), vec![1]),
            (Item::Stream(&UDP, false), vec![1024]),
            (Item::OneWay(&TCP, oneway(10)), vec![8]),
        ];
        let chosen = choose(items, Direction::Receive, false).unwrap();
        let got: Vec<_> = chosen.iter().map(|c| (c.proto, c.sizes.clone())).collect();
        assert_eq!(
            got,
            [
                (Proto::Tcp, vec![1, 64]),
                (Proto::Udp, vec![1024]),
                (Proto::Tcp, vec![8])
            ]
        );
        assert!(matches!(chosen[0].kind, Kind::PingPong));
        assert!(matches!(chosen[1].kind, Kind::Stream(Direction::Receive)));
        assert!(matches!(chosen[2].kind, Kind::OneWay(p) if p.messages == 10));
    }

    #[test]
    fn a_named_local_mechanism_or_a_too_long_oneway_figure_is_refused() {
        let named = vec![(Item::PingPong(&PIPE, false), vec![1])];
        assert_eq!(
            choose(named, Direction::Send, true).unwrap_err(),
            "--remote runs tcp and udp against the agent; 'pipe' runs on one host"
        );
        let long = vec![(Item::OneWay(&UDP, oneway(MAX_ONEWAY_MESSAGES + 1)), vec![8])];
        let e = choose(long, Direction::Send, false).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "--remote: a one-way figure times at most {MAX_ONEWAY_MESSAGES} messages"
            )) && e.contains(&format!("not {}:", MAX_ONEWAY_MESSAGES + 1)),
            "{e}"
        );
    }

    /// An agent no test reaches: making items only holds the session.
    struct Unreached;

    impl Control for Unreached {
        fn agent(&self) -> SocketAddr {
            "198.18.0.2:7207".parse().unwrap()
        }
        fn start(&mut self, _: &Task) -> Result<(u16, DataKey), String> {
            unreachable!()
        }
        fn finish(&mut self, _: Duration) -> Result<Report, String> {
            unreachable!()
        }
        fn clock(&mut self) -> Result<[u64; 4], String> {
            unreachable!()
        }
        fn alive(&self) -> Result<(), String> {
            Ok(())
        }
    }

    #[test]
    fn chosen_items_become_external_ones_and_none_is_refused() {
        let control: SharedControl = Arc::new(Mutex::new(Box::new(Unreached)));
        let chosen = vec![Chosen {
            proto: Proto::Udp,
            kind: Kind::PingPong,
            sizes: vec![1, 64],
        }];
        let items = external(chosen, Arc::clone(&control), None, Some(1)).unwrap();
        assert_eq!(items.len(), 1);
        assert!(matches!(&items[0].0, Item::External(_)));
        assert_eq!(
            (items[0].0.id(), items[0].1.as_slice()),
            ("udp", &[1, 64][..])
        );
        assert_eq!(
            external(Vec::new(), control, None, None).err().unwrap(),
            "--remote runs tcp and udp against the agent: name one of them (or none for both)"
        );
    }
}

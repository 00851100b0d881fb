//! Figures between two hosts: the agent (`ipcmark serve`) on the far host,
//! its control protocol, the data connections a figure runs over, the
//! efficiency of a figure against the link's theoretical maximum, and what
//! a run needs of them: its remote items (`items`), the link to the agent
//! (`link`) and the agent a network preset starts for itself
//! (`own_agent`). The two-host testbed they are tried on is a layer of its
//! own (`testbed`); the command line keeps only the flags and the call.
//!
//! Layer: above `output` (the agent sends its host's environment record as
//! the run's JSON writes it) and below `cli`.

pub mod agent;
pub mod auth;
pub mod client;
pub mod clock;
pub mod data;
pub mod figures;
pub mod frame;
pub mod items;
pub mod link;
pub mod own_agent;
pub mod protocol;
pub mod roles;
pub mod task;
pub mod wire;

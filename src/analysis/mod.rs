//! Numbers derived from a run's figures, apart from how they are shown:
//! two runs' figures compared ([`compare`]), the cost model fitted on each
//! mechanism's sizes ([`cost_model`], read
//! from the figures' records) and the warnings about the conditions they
//! ran under ([`warnings`], read from the figures as measured and the
//! machine). Output renders them; nothing here prints.

pub mod advise;
pub mod check;
pub mod compare;
pub mod cost_model;
pub mod explain;
pub mod explain_wakeup;
pub mod fleet;
pub mod level;
pub mod map;
pub mod op_anatomy;
pub mod placement;
pub mod ranking;
pub mod selftest;
pub mod tax;
pub mod warnings;
pub mod watch;

//! The run: one figure of each timing model ([`runner`]), ping-pong figures
//! sampled together ([`sweep`]), passes ([`passes`]), the record of a figure
//! ([`figure`]), and the session that runs a plan's figures in order.

pub mod correct;
pub mod figure;
pub mod load;
pub mod passes;
pub mod placement_probe;
pub mod remote;
pub mod repeated;
pub mod runner;
pub mod session;
pub mod sweep;
pub mod under_load;

#[cfg(test)]
mod coverage;

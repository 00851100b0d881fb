//! The timing models: how each kind of figure is timed, what is subtracted
//! and what is checked (docs/method.md has one section per model).

pub mod calibrate;
pub mod eventloop;
pub mod oneway;
pub mod oploop;
pub mod periodic;
pub mod pingpong;
pub mod rate;
pub mod region;
pub mod sampling;
pub mod score;
pub mod stream;
#[cfg(test)]
pub mod test_peer;

//! A group of worker processes that run one workload together.
//!
//! The caller creates the shared objects first; [`Group::spawn`] then forks one
//! child per member. Each child asks to die with its parent
//! (`PR_SET_PDEATHSIG`), places itself on its CPU, reads back where it really
//! runs, reports ready and waits at a start barrier, so that all begin
//! together when [`Group::run`] opens it. Results come back through an
//! anonymous `MAP_SHARED` page (nothing to leak, whatever kills the run). The
//! parent never blocks without a deadline, and every path out of a [`Group`]
//! (success, a member's failure, a time-out, Ctrl-C, a panic in the parent)
//! kills and reaps every child.
//!
//! The engine knows nothing of what the members do: a member is a closure that
//! counts *operations* (whatever the workload calls them), calls
//! [`Member::before_op`] before each one (which applies a scheduled migration
//! and publishes progress), and may report a few counters.
//!
//! By concern, each depending only on those above it:
//! - [`page`]: the results page's layout;
//! - [`migration`]: scheduled moves and how a member carries them out;
//! - [`member`]: a member process, from the fork to its exit;
//! - [`children`]: the parent's view: failures, progress, reports, kill and reap;
//! - [`spawn`]: forking, the start barrier and the run.

pub mod children;
pub mod member;
pub mod migration;
pub mod page;
pub mod spawn;

// The paths the rest of the crate uses; everything else by its module's path.
pub use children::{GroupError, MemberReport};
pub use member::Member;
pub use migration::Migration;
pub use spawn::{Group, GroupReport, GroupSpec};

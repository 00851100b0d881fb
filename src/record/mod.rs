//! The records ipcmark writes and reads back (issue 30's target layer):
//! what a report's parts are, defined once for every reader. It begins with
//! a figure's identity ([`key::FigureKey`]), which the history, `compare`
//! and the HTML report each defined their own way; the report's records
//! themselves move here next.

pub mod key;

//! The machine's class of each run kept (`ipcmark history --class`): read
//! from the header each stored report opens with (`record::header::Header`,
//! its strings made safe), not from a column, so a history written before
//! classes existed lists them too.

use super::{Error, RunId, Store};
use crate::record::class::MachineClass;
use crate::record::header::Header;
use serde_json::Value;
use std::collections::BTreeMap;

impl Store {
    /// The class of every run whose header reads, by id.
    pub fn classes(&self) -> Result<BTreeMap<RunId, MachineClass>, Error> {
        if !self.tables {
            return Ok(BTreeMap::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id, report FROM runs ORDER BY id")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, RunId>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (id, text) = row.map_err(|e| self.sql(e))?;
            let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            crate::output::sanitise::report(&mut value);
            if let Ok(header) = serde_json::from_value::<Header>(value) {
                out.insert(id, MachineClass::of(&header.environment));
            }
        }
        Ok(out)
    }
}

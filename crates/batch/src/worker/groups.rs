//! FIFO: which batch may work on which message group.

use backpressure_core::sync::lock;
use std::collections::HashSet;
use std::sync::Mutex;

use crate::record::SqsRecord;

/// The message groups some batch of this worker is working on.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    held: Mutex<HashSet<String>>,
}

impl Groups {
    /// Claims the groups of `records` for one batch (see [`claim`]).
    pub(crate) fn claim(&self, records: Vec<SqsRecord>) -> (Vec<SqsRecord>, Vec<SqsRecord>) {
        claim(&mut lock(&self.held), records)
    }

    /// The groups of a settled batch, free for the next.
    pub(crate) fn free(&self, records: &[SqsRecord]) {
        let mut held = lock(&self.held);
        for record in records {
            if let Some(group) = record.message_group_id() {
                held.remove(group);
            }
        }
    }
}

/// Claims each record's message group for one batch: returns the records it
/// may work on and, apart, those whose group another batch holds (`held`).
pub(crate) fn claim(
    held: &mut HashSet<String>,
    records: Vec<SqsRecord>,
) -> (Vec<SqsRecord>, Vec<SqsRecord>) {
    let mut claimed = HashSet::new();
    let (mut mine, mut taken) = (Vec::new(), Vec::new());
    for record in records {
        match record.message_group_id().map(str::to_owned) {
            Some(group) if claimed.contains(&group) => mine.push(record),
            Some(group) if held.contains(&group) => taken.push(record),
            Some(group) => {
                held.insert(group.clone());
                claimed.insert(group);
                mine.push(record);
            }
            None => mine.push(record),
        }
    }
    (mine, taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, group: &str) -> SqsRecord {
        SqsRecord::new(id).with_attribute("MessageGroupId", group)
    }

    fn ids(records: &[SqsRecord]) -> Vec<&str> {
        records.iter().filter_map(|r| r.message_id.as_deref()).collect()
    }

    #[test]
    fn a_group_another_batch_holds_is_given_back_whole() {
        let mut held = HashSet::from(["b".to_owned()]);
        let batch =
            vec![record("a1", "a"), record("b5", "b"), record("a2", "a"), record("b6", "b")];
        let (mine, taken) = claim(&mut held, batch);
        assert_eq!((ids(&mine), ids(&taken)), (vec!["a1", "a2"], vec!["b5", "b6"]));
        assert_eq!(held, HashSet::from(["a".to_owned(), "b".to_owned()]));
        let (mine, taken) = claim(&mut held, vec![record("a3", "a"), record("c1", "c")]);
        assert_eq!((ids(&mine), ids(&taken)), (vec!["c1"], vec!["a3"]));
    }
}

//! Which records of a batch run together, and in what order.

use std::ops::Range;

use crate::record::SqsRecord;

/// FIFO: the records of each message group, in batch order, groups in order
/// of first appearance. Standard: every record alone. Returned as one list of
/// record indices and the range of it each group takes, so a standard batch
/// costs no allocation per record.
pub(crate) fn groups(records: &[SqsRecord], fifo: bool) -> (Vec<usize>, Vec<Range<usize>>) {
    if !fifo {
        return ((0..records.len()).collect(), (0..records.len()).map(|i| i..i + 1).collect());
    }
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut by_key: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, record) in records.iter().enumerate() {
        match record.message_group_id() {
            Some(key) => match by_key.get(key) {
                Some(&g) => members[g].push(index),
                None => {
                    by_key.insert(key, members.len());
                    members.push(vec![index]);
                }
            },
            // A FIFO record always has a group; without one it is ordered with nothing.
            None => members.push(vec![index]),
        }
    }
    let mut order = Vec::with_capacity(records.len());
    let mut ranges = Vec::with_capacity(members.len());
    for group in members {
        let start = order.len();
        order.extend(group);
        ranges.push(start..order.len());
    }
    (order, ranges)
}

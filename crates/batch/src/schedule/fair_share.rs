//! Fair shares on standard queues whose messages carry a `MessageGroupId`
//! (SQS fair queues: a group is a tenant, and carries no ordering): at most
//! N messages of one group in work at once, across every batch this
//! processor runs, the other groups' messages first. What waits keeps its
//! group's arrival order (the semaphore queues waiters first come, first
//! served) and is cut by the deadline guard like any unfinished message.

use backpressure_core::sync::lock;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::order::groups;
use crate::record::SqsRecord;

/// The per-group limit and the groups in work.
#[derive(Debug)]
pub(crate) struct GroupLimits {
    per_group: usize,
    slots: Mutex<Slots>,
}

/// The groups' semaphores, and the size at which forgotten ones are next swept.
#[derive(Debug, Default)]
struct Slots {
    by_group: HashMap<String, Arc<Semaphore>>,
    sweep_at: usize,
}

impl GroupLimits {
    pub(crate) fn new(per_group: usize) -> Self {
        Self { per_group: per_group.max(1), slots: Mutex::default() }
    }

    /// Waits until `record`'s group has a free slot; `None` for a record
    /// without a group, or on a FIFO queue (whose groups run one at a time).
    pub(crate) async fn admit(
        &self,
        record: &SqsRecord,
        fifo: bool,
    ) -> Option<OwnedSemaphorePermit> {
        let group = record.message_group_id().filter(|_| !fifo)?;
        let slot = {
            let mut slots = lock(&self.slots);
            // Groups no batch holds any more are forgotten, swept when the map
            // has doubled, so admitting a message stays O(1) amortised.
            if slots.by_group.len() >= slots.sweep_at {
                slots.by_group.retain(|_, slot| Arc::strong_count(slot) > 1);
                slots.sweep_at = (slots.by_group.len() * 2).max(64);
            }
            let slot = slots.by_group.entry(group.to_owned());
            slot.or_insert_with(|| Arc::new(Semaphore::new(self.per_group))).clone()
        };
        slot.acquire_owned().await.ok()
    }
}

/// [`GroupLimits::admit`], when there are limits.
pub(crate) async fn admit(
    limits: Option<&GroupLimits>,
    record: &SqsRecord,
    fifo: bool,
) -> Option<OwnedSemaphorePermit> {
    limits?.admit(record, fifo).await
}

/// The order a batch starts in: FIFO and unlimited batches as
/// [`groups`] has them; with a per-group limit on a standard queue, one
/// message of each group in turn (groups in order of first appearance, each
/// group's messages in arrival order), so a group of many cannot fill the
/// concurrency ahead of the others.
pub(crate) fn schedule(
    records: &[SqsRecord],
    fifo: bool,
    limits: Option<&GroupLimits>,
) -> (Vec<usize>, Vec<Range<usize>>) {
    if fifo || limits.is_none() {
        return groups(records, fifo);
    }
    let mut queues: Vec<std::collections::VecDeque<usize>> = Vec::new();
    let mut by_group: HashMap<&str, usize> = HashMap::new();
    for (index, record) in records.iter().enumerate() {
        match record.message_group_id() {
            Some(group) => {
                let next = queues.len();
                let at = *by_group.entry(group).or_insert(next);
                if at == next {
                    queues.push(Default::default());
                }
                queues[at].push_back(index);
            }
            None => queues.push(std::iter::once(index).collect()),
        }
    }
    let mut order = Vec::with_capacity(records.len());
    while order.len() < records.len() {
        for queue in &mut queues {
            order.extend(queue.pop_front());
        }
    }
    let ranges = (0..order.len()).map(|i| i..i + 1).collect();
    (order, ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, group: Option<&str>) -> SqsRecord {
        let record = SqsRecord::new(id);
        match group {
            Some(group) => record.with_attribute("MessageGroupId", group),
            None => record,
        }
    }

    #[test]
    fn a_noisy_group_is_interleaved_with_the_quiet_ones_in_arrival_order() {
        let records = [
            record("a1", Some("a")),
            record("a2", Some("a")),
            record("a3", Some("a")),
            record("b1", Some("b")),
            record("x", None),
            record("a4", Some("a")),
            record("c1", Some("c")),
        ];
        let limits = GroupLimits::new(2);
        let (order, _) = schedule(&records, false, Some(&limits));
        let ids: Vec<&str> =
            order.iter().map(|&i| records[i].message_id.as_deref().unwrap()).collect();
        assert_eq!(ids, ["a1", "b1", "x", "c1", "a2", "a3", "a4"]);
        let (unlimited, _) = schedule(&records, false, None);
        assert_eq!(unlimited, (0..7).collect::<Vec<_>>(), "no limit: batch order");
    }
}

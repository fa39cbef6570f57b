//! The SQS queue: visible messages, messages in flight whose lease will run
//! out, receive counts and the dead-letter queue.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Second it was sent.
    pub sent: u32,
    /// `ApproximateReceiveCount`.
    pub receives: u16,
    /// Fails every time it is processed, until the DLQ takes it.
    pub poison: bool,
}

/// The queue's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueModel {
    /// `VisibilityTimeout`, seconds: how long a message received and neither
    /// deleted nor extended stays invisible.
    pub visibility_timeout: u64,
    /// The redrive policy's `maxReceiveCount`.
    pub max_receive_count: u16,
    /// Fraction of messages that are poison.
    pub poison_fraction: f64,
    /// Messages in flight beyond which receives come back empty (core's
    /// `in_flight_limit`: 120,000).
    pub in_flight_limit: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Lease {
    expires: u64,
    sequence: u64,
    sent: u32,
    receives: u16,
    poison: bool,
}

/// Messages alike (sent in the same second, received as often, poison or
/// not), one after the other in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    message: Message,
    count: u64,
}

/// The queue's state. Visible messages are kept as runs of alike ones, so a
/// backlog of millions takes memory by the seconds it was sent in, not by
/// its messages.
#[derive(Debug, Clone)]
pub struct Queue {
    model: QueueModel,
    visible: VecDeque<Run>,
    visible_count: u64,
    leases: BinaryHeap<Reverse<Lease>>,
    lease_sequence: u64,
    /// Messages received and not yet deleted or visible again: in slots and
    /// in lapsing leases.
    in_flight: u64,
    dead_lettered: u64,
    dead_lettered_healthy: u64,
}

impl Queue {
    /// An empty queue.
    pub fn new(model: QueueModel) -> Self {
        Self {
            model,
            visible: VecDeque::new(),
            visible_count: 0,
            leases: BinaryHeap::new(),
            lease_sequence: 0,
            in_flight: 0,
            dead_lettered: 0,
            dead_lettered_healthy: 0,
        }
    }

    /// `SendMessage`.
    pub fn send(&mut self, message: Message) {
        self.visible_count += 1;
        match self.visible.back_mut() {
            Some(run) if run.message == message => run.count += 1,
            _ => self.visible.push_back(Run { message, count: 1 }),
        }
    }

    /// `ApproximateNumberOfMessages`.
    pub fn visible(&self) -> u64 {
        self.visible_count
    }

    /// The first visible message, taken off the queue.
    fn pop_front(&mut self) -> Option<Message> {
        let run = self.visible.front_mut()?;
        let message = run.message;
        run.count -= 1;
        if run.count == 0 {
            self.visible.pop_front();
        }
        self.visible_count -= 1;
        Some(message)
    }

    /// `ApproximateNumberOfMessagesNotVisible`.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// When the message at the head of the queue, the next to be received, was sent.
    pub fn head_sent(&self) -> Option<u32> {
        self.visible.front().map(|run| run.message.sent)
    }

    /// Messages the redrive policy has moved to the DLQ.
    pub fn dead_lettered(&self) -> u64 {
        self.dead_lettered
    }

    /// Of those, messages that were not poison: they never got processed.
    pub fn dead_lettered_healthy(&self) -> u64 {
        self.dead_lettered_healthy
    }

    /// Makes visible again every message whose lease ended by `now`.
    pub fn expire_leases(&mut self, now: u64) {
        while let Some(Reverse(lease)) = self.leases.peek().copied() {
            if lease.expires > now {
                break;
            }
            self.leases.pop();
            self.in_flight -= 1;
            let Lease { sent, receives, poison, .. } = lease;
            self.send(Message { sent, receives, poison });
        }
    }

    /// `ReceiveMessage` for one message. A message already received
    /// `maxReceiveCount` times goes to the DLQ instead of being returned:
    /// "when the ReceiveCount for a message exceeds the maxReceiveCount",
    /// SQS moves it ("Using dead-letter queues in Amazon SQS",
    /// <https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html>).
    /// Nothing is returned while the in-flight limit is reached.
    pub fn receive(&mut self) -> Option<Message> {
        if self.in_flight >= self.model.in_flight_limit {
            return None;
        }
        loop {
            let mut message = self.pop_front()?;
            if message.receives >= self.model.max_receive_count {
                self.dead_lettered += 1;
                self.dead_lettered_healthy += u64::from(!message.poison);
                continue;
            }
            message.receives = message.receives.saturating_add(1);
            self.in_flight += 1;
            return Some(message);
        }
    }

    /// `DeleteMessage` of a message in flight.
    pub fn delete(&mut self) {
        self.in_flight -= 1;
    }

    /// `ChangeMessageVisibility` to 0: visible again at once.
    pub fn release(&mut self, message: Message) {
        self.in_flight -= 1;
        self.visible_count += 1;
        match self.visible.front_mut() {
            Some(run) if run.message == message => run.count += 1,
            _ => self.visible.push_front(Run { message, count: 1 }),
        }
    }

    /// Nobody will delete or extend it: visible again `VisibilityTimeout`
    /// after `from` (its receive, or the last heartbeat).
    pub fn lapse(&mut self, message: Message, from: u64) {
        self.lease_sequence += 1;
        self.leases.push(Reverse(Lease {
            expires: from + self.model.visibility_timeout,
            sequence: self.lease_sequence,
            sent: message.sent,
            receives: message.receives,
            poison: message.poison,
        }));
    }

    /// Every message still in the queue (visible or lapsing), for the end of a run.
    pub fn remaining(&self) -> impl Iterator<Item = Message> + '_ {
        let lapsing = self.leases.iter().map(|Reverse(lease)| Message {
            sent: lease.sent,
            receives: lease.receives,
            poison: lease.poison,
        });
        let visible = self
            .visible
            .iter()
            .flat_map(|run| std::iter::repeat_n(run.message, run.count as usize));
        visible.chain(lapsing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(limit: u64) -> QueueModel {
        QueueModel {
            visibility_timeout: 30,
            max_receive_count: 2,
            poison_fraction: 0.0,
            in_flight_limit: limit,
        }
    }

    const MESSAGE: Message = Message { sent: 0, receives: 0, poison: true };

    #[test]
    fn a_message_goes_to_the_dlq_on_the_receive_after_max_receive_count() {
        let mut queue = Queue::new(model(10));
        queue.send(MESSAGE);
        for receive in 1..=2 {
            let message = queue.receive().unwrap();
            assert_eq!(message.receives, receive);
            queue.lapse(message, 100);
            queue.expire_leases(129);
            assert_eq!(queue.visible(), 0, "still invisible one second before the timeout");
            queue.expire_leases(130);
            assert_eq!((queue.visible(), queue.in_flight()), (1, 0));
        }
        assert_eq!(queue.receive(), None);
        assert_eq!((queue.visible(), queue.in_flight(), queue.dead_lettered()), (0, 0, 1));
    }

    #[test]
    fn alike_messages_are_one_run_and_keep_their_order() {
        let mut queue = Queue::new(model(1_000_000));
        let at = |sent| Message { sent, receives: 0, poison: false };
        for sent in [1, 1, 1, 2, 2] {
            queue.send(at(sent));
        }
        assert_eq!((queue.visible(), queue.visible.len()), (5, 2), "two runs for five");
        let first = queue.receive().unwrap();
        assert_eq!((first.sent, first.receives), (1, 1));
        queue.release(first);
        assert_eq!(queue.visible.len(), 3, "received once, it is no longer alike the rest");
        let order: Vec<(u32, u16)> = queue.remaining().map(|m| (m.sent, m.receives)).collect();
        assert_eq!(order, [(1, 1), (1, 0), (1, 0), (2, 0), (2, 0)]);
        for _ in 0..1_000 {
            queue.send(at(3));
        }
        assert_eq!((queue.visible(), queue.visible.len()), (1_005, 4));
        let sent: Vec<u32> = std::iter::from_fn(|| queue.receive()).map(|m| m.sent).collect();
        assert_eq!(sent.len(), 1_005);
        assert!(sent.windows(2).all(|w| w[0] <= w[1]), "first in, first out");
        assert_eq!(queue.visible(), 0);
    }

    #[test]
    fn receives_come_back_empty_at_the_in_flight_limit() {
        let mut queue = Queue::new(model(2));
        for _ in 0..3 {
            queue.send(MESSAGE);
        }
        assert!(queue.receive().is_some() && queue.receive().is_some());
        assert_eq!(queue.receive(), None);
        assert_eq!(queue.visible(), 1);
        queue.delete();
        assert!(queue.receive().is_some());
    }
}

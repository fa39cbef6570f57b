//! What a sweep does with the messages it took: replay them (send, put on
//! record, delete), discard them, print them for a dry run, or keep them
//! here with the reason they could not be replayed.

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use backpressure_core::quarantine::BodyObject;
use backpressure_core::sqs_limits::{MAX_BATCH_BYTES, plan_batches};

use super::{MAX_MESSAGE_BYTES, Sweep};
use crate::aws::queue::Queue;
use crate::changing::audit::{self, Outcome};
use crate::changing::destination::Destinations;
use crate::changing::outgoing::{send_entry, sqs_size};
use crate::reading::entry::Entry;
use crate::terminal::error::CliError;
use crate::terminal::printable::printable;

impl Sweep<'_> {
    pub(super) async fn replay(
        &self,
        todo: Vec<Entry>,
        destinations: &Destinations,
        dry_run: bool,
    ) -> Result<(), CliError> {
        let mut groups: Vec<(Queue, Vec<Entry>)> = Vec::new();
        for entry in todo {
            match destinations.resolve(&entry).await {
                Ok(queue) => match groups.iter_mut().find(|(q, _)| q.url == queue.url) {
                    Some((_, entries)) => entries.push(entry),
                    None => groups.push((queue, vec![entry])),
                },
                Err(reason) => self.fail(&entry, None, reason).await?,
            }
        }
        for (destination, entries) in groups {
            let fifo = destination.url.ends_with(".fifo");
            // Each request's batch id is its entry's index here, unique in any batch.
            let mut ready = Vec::new();
            for entry in entries {
                match send_entry(&entry, ready.len(), fifo) {
                    Ok(request) => ready.push((entry, request)),
                    Err(reason) => self.fail(&entry, Some(&destination.url), reason).await?,
                }
            }
            let sizes: Vec<usize> = ready.iter().map(|(entry, _)| sqs_size(entry)).collect();
            let (batches, too_large) = plan_batches(&sizes, MAX_MESSAGE_BYTES.min(MAX_BATCH_BYTES));
            for index in too_large {
                let reason = "larger than SQS accepts in one message".to_owned();
                self.fail(&ready[index].0, Some(&destination.url), reason).await?;
            }
            for batch in batches {
                if dry_run {
                    let entries: Vec<&Entry> = batch.iter().map(|&i| &ready[i].0).collect();
                    self.print_dry_run(&entries, &destination.url);
                } else {
                    self.send(&ready, &batch, &destination).await?;
                }
            }
        }
        Ok(())
    }

    /// Sends the `batch` (indices) of `ready`, puts the outcome on record and
    /// deletes what SQS confirmed.
    async fn send(
        &self,
        ready: &[(Entry, SendMessageBatchRequestEntry)],
        batch: &[usize],
        destination: &Queue,
    ) -> Result<(), CliError> {
        let entries: Vec<&Entry> = batch.iter().map(|&i| &ready[i].0).collect();
        let entries = entries.as_slice();
        let requests = batch.iter().map(|&i| ready[i].1.clone()).collect();
        let started = self.pacer.wait(entries.len()).await;
        if self.with_state(|s| s.stopped) {
            // Another loop failed (an audit file that cannot be written, say): send nothing more.
            self.hold(entries);
            return Ok(());
        }
        let started = audit::now_minus(started.elapsed());
        let results = match destination.send(requests).await {
            Ok(results) => results,
            Err(error) => {
                // Unknown whether SQS took them: keep them here (a rerun sends them again).
                self.hold(entries);
                return Err(error);
            }
        };
        let mut outcome: Vec<Option<Result<String, String>>> = vec![None; entries.len()];
        for (id, result) in results {
            if let Some(slot) = batch.iter().position(|&i| i == id).and_then(|p| outcome.get_mut(p))
            {
                *slot = Some(result);
            }
        }
        let (mut lines, mut sent, mut refused) = (Vec::new(), Vec::new(), Vec::new());
        for (entry, result) in entries.iter().zip(outcome) {
            let result =
                result.unwrap_or_else(|| Err("SQS returned no result for this entry".into()));
            let mut line = self.line(entry, Some(&destination.url), &started);
            match result {
                Ok(new_id) => {
                    line.new_message_id = Some(new_id);
                    sent.push(*entry);
                }
                Err(reason) => {
                    line.result = Outcome::SendFailed;
                    line.reason = Some(reason);
                    refused.push(*entry);
                }
            }
            lines.push(line);
        }
        self.hold(&refused);
        if let Err(error) = self.record(&lines).await {
            // Not on record: must not be deleted. A rerun sends them again.
            self.hold(&sent);
            self.with_state(|s| s.tally.sent_not_on_record += sent.len() as u64);
            return Err(error);
        }
        self.with_state(|s| {
            s.tally.failed += refused.len() as u64;
            s.tally.replayed += sent.len() as u64;
            if self.keeps_new_ids {
                let new_ids = lines.iter().filter_map(|l| l.new_message_id.clone());
                s.tally.new_message_ids.extend(new_ids);
            }
        });
        self.progress.inc(sent.len() as u64);
        self.delete_sent(&sent, &destination.url).await
    }

    /// Deletes replayed messages here; one that will not go is on record as
    /// sent, so a rerun deletes it without sending it again.
    async fn delete_sent(&self, sent: &[&Entry], destination: &str) -> Result<(), CliError> {
        if sent.is_empty() {
            return Ok(());
        }
        let handles: Vec<&str> = sent.iter().map(|e| e.receipt_handle.as_str()).collect();
        let results = self.source.delete(&handles).await?;
        let deleted: Vec<usize> =
            results.iter().filter(|(_, r)| r.is_ok()).map(|(i, _)| *i).collect();
        let started = audit::now();
        let mut lines = Vec::new();
        let gone: Vec<&Entry> = deleted.iter().filter_map(|&i| sent.get(i).copied()).collect();
        for (index, entry) in sent.iter().enumerate().filter(|(i, _)| !deleted.contains(i)) {
            let mut line = self.line(entry, Some(destination), &started);
            line.result = Outcome::DeleteFailed;
            line.reason =
                results.iter().find(|(i, _)| *i == index).and_then(|(_, r)| r.clone().err());
            lines.push(line);
            self.hold(&[*entry]);
        }
        self.with_state(|s| s.tally.failed += lines.len() as u64);
        self.record(&lines).await?;
        self.delete_objects(&gone, Some(destination)).await
    }

    /// Deletes the S3 objects that held the bodies of `gone` (messages
    /// deleted here), each on record. A record is deleted before its object,
    /// so no record is left naming an object that is gone; an object S3 will
    /// not delete is left to the bucket's lifecycle rule.
    async fn delete_objects(
        &self,
        gone: &[&Entry],
        destination: Option<&str>,
    ) -> Result<(), CliError> {
        let Some(objects) = self.objects else { return Ok(()) };
        let with_object: Vec<(&Entry, &BodyObject)> =
            gone.iter().filter_map(|e| e.body_object.as_ref().map(|o| (*e, o))).collect();
        if with_object.is_empty() {
            return Ok(());
        }
        let refs: Vec<&BodyObject> = with_object.iter().map(|(_, o)| *o).collect();
        let results = objects.delete(&refs).await;
        let started = audit::now();
        let mut lines = Vec::with_capacity(results.len());
        for ((entry, object), result) in with_object.iter().zip(results) {
            let mut line = self.line(entry, destination, &started);
            match result {
                Ok(()) => line.result = Outcome::ObjectDeleted,
                Err(reason) => {
                    tracing::warn!(object = %object.uri(), %reason, "the body's object was not deleted: the bucket's lifecycle rule expires it");
                    line.result = Outcome::ObjectDeleteFailed;
                    line.reason = Some(reason);
                }
            }
            lines.push(line);
        }
        self.record(&lines).await
    }

    /// Deletes `entries` (discarded, or sent before an interruption), then
    /// writes their audit lines.
    pub(super) async fn delete(&self, entries: Vec<Entry>, done: Outcome) -> Result<(), CliError> {
        let handles: Vec<&str> = entries.iter().map(|e| e.receipt_handle.as_str()).collect();
        let started = audit::now();
        let results = match self.source.delete(&handles).await {
            Ok(results) => results,
            Err(error) => {
                self.hold(&entries.iter().collect::<Vec<_>>());
                return Err(error);
            }
        };
        let mut lines = Vec::new();
        let (mut ok, mut failed) = (0, 0);
        for (index, entry) in entries.iter().enumerate() {
            let mut line = self.line(entry, None, &started);
            match results.iter().find(|(i, _)| *i == index).map(|(_, r)| r.clone()) {
                Some(Ok(())) => {
                    line.result = done;
                    ok += 1;
                }
                other => {
                    line.result = if done == Outcome::Discarded {
                        Outcome::DiscardFailed
                    } else {
                        Outcome::DeleteFailed
                    };
                    line.reason =
                        Some(other.and_then(Result::err).unwrap_or_else(|| "no result".into()));
                    failed += 1;
                    self.hold(&[entry]);
                }
            }
            lines.push(line);
        }
        self.with_state(|s| {
            s.tally.failed += failed;
            match done {
                Outcome::Discarded => s.tally.discarded += ok,
                Outcome::DuplicateDeleted => s.tally.duplicates += ok,
                _ => s.tally.deleted_on_resume += ok,
            }
        });
        self.progress.inc(ok);
        self.record(&lines).await?;
        if done == Outcome::DuplicateDeleted {
            // Both records name one object (its key is the source message's):
            // the first record's replay deletes it, or keeps it if that failed.
            return Ok(());
        }
        let gone: Vec<&Entry> = entries
            .iter()
            .zip(&lines)
            .filter(|(_, line)| line.result == done)
            .map(|(entry, _)| entry)
            .collect();
        self.delete_objects(&gone, None).await
    }

    fn print_dry_run(&self, entries: &[&Entry], destination: &str) {
        for entry in entries {
            println!(
                "would send {id} ({bytes} bytes, {attributes} attribute(s){group}) to {destination}",
                id = printable(&entry.original_message_id, 80),
                bytes = entry.body.as_deref().map_or(0, str::len),
                attributes = entry.message_attributes.len(),
                group = entry
                    .group_id
                    .as_deref()
                    .map(|g| format!(", group {}", printable(g, 80)))
                    .unwrap_or_default(),
            );
        }
        self.hold(entries);
        self.with_state(|s| s.tally.would_send += entries.len() as u64);
        self.progress.inc(entries.len() as u64);
    }

    /// A message that cannot be replayed: kept here, counted, on record.
    async fn fail(
        &self,
        entry: &Entry,
        destination: Option<&str>,
        reason: String,
    ) -> Result<(), CliError> {
        if self.audit.is_none() {
            // A dry run writes no audit line, whose warning would say this.
            tracing::warn!(queue_message_id = %entry.queue_message_id, original_message_id = %entry.original_message_id, %reason, "not replayed");
        }
        self.hold(&[entry]);
        self.with_state(|s| s.tally.failed += 1);
        let mut line = self.line(entry, destination, &audit::now());
        line.result = Outcome::SendFailed;
        line.reason = Some(reason);
        self.record(&[line]).await
    }
}

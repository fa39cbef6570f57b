//! The emulator's own ceiling for moving messages: no checks, no audit.

use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, SendMessageBatchRequestEntry};
use e2e_tests::fixtures::{Aws, BoxError};

/// Receive 10, send them on, delete them, until a receive comes back empty.
pub async fn bare_move(aws: &Aws, from: &str, to: &str) -> Result<usize, BoxError> {
    let mut moved = 0;
    loop {
        let received =
            aws.sqs.receive_message().queue_url(from).max_number_of_messages(10).send().await?;
        let messages = received.messages.unwrap_or_default();
        if messages.is_empty() {
            return Ok(moved);
        }
        let mut sends = Vec::new();
        let mut deletes = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            sends.push(
                SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(m.body().unwrap_or("x"))
                    .build()?,
            );
            deletes.push(
                DeleteMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(m.receipt_handle().unwrap_or_default())
                    .build()?,
            );
        }
        aws.sqs.send_message_batch().queue_url(to).set_entries(Some(sends)).send().await?;
        aws.sqs.delete_message_batch().queue_url(from).set_entries(Some(deletes)).send().await?;
        moved += messages.len();
    }
}

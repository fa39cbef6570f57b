//! [`DynamoDbStore`]: claims in a DynamoDB table, Powertools' layout
//! (partition key `id`, TTL attribute `expiration`, `status`,
//! `in_progress_expiration`, `validation`, `data`) plus `holder`, the token
//! that makes a completion, a renewal or a release conditional on still
//! holding the claim. Each rule of [`super::record`] is a condition
//! expression here, and every answer is read back through it.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, KeysAndAttributes, ReturnValuesOnConditionCheckFailure,
};
use backpressure_core::error::ApiError;

use super::claim::{ClaimOutcome, Status, StoredRecord, epoch_ms, epoch_s_ceil};
use super::requests::{ClaimRequest, CompleteRequest, LookupRequest, ReleaseRequest, RenewRequest};
use super::{IdempotencyStore, StoreError};

/// `BatchGetItem` reads at most 100 keys a call.
const MAX_KEYS: usize = 100;
/// Rounds of `UnprocessedKeys` retried before the rest is left to the claims.
const UNPROCESSED_ROUNDS: u32 = 3;
const CLAIMABLE: &str = "attribute_not_exists(id) OR expiration <= :now_s \
                         OR (#status = :in_progress AND in_progress_expiration <= :now_ms)";
const HELD: &str = "#status = :in_progress AND holder = :holder";

/// What a claim's conditional write did.
enum Put {
    /// It landed: the claim is this holder's.
    Written,
    /// Its condition refused it, with the record that refused it when one
    /// could be read (returned with the refusal, or read back after it).
    Refused(Option<StoredRecord>),
}

/// Claims in the DynamoDB table `table`.
#[derive(Debug, Clone)]
pub(crate) struct DynamoDbStore {
    client: Client,
    table: String,
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

fn n(number: u64) -> AttributeValue {
    AttributeValue::N(number.to_string())
}

fn key(id: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([("id".to_owned(), s(id))])
}

fn names() -> HashMap<String, String> {
    HashMap::from([("#status".to_owned(), "status".to_owned())])
}

/// The values of [`HELD`]: the condition of a completion, a renewal and a release.
fn held_values(holder: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([
        (":in_progress".to_owned(), s(Status::InProgress.as_str())),
        (":holder".to_owned(), s(holder)),
    ])
}

fn unreadable(id: &str, why: &str) -> StoreError {
    StoreError::Unreadable { id: id.to_owned(), why: why.to_owned() }
}

/// A stored item as a record, or why it cannot be one.
fn parse(id: &str, item: &HashMap<String, AttributeValue>) -> Result<StoredRecord, StoreError> {
    let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
    let number =
        |name: &str| item.get(name).and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok());
    let status = text("status").and_then(|s| Status::parse(&s));
    let status =
        status.ok_or_else(|| unreadable(id, "its status is neither INPROGRESS nor COMPLETED"))?;
    Ok(StoredRecord {
        status,
        expiration: number("expiration")
            .ok_or_else(|| unreadable(id, "it has no numeric expiration"))?,
        in_progress_until: number("in_progress_expiration").unwrap_or(0),
        validation: text("validation").unwrap_or_default(),
        holder: text("holder").unwrap_or_default(),
        data: text("data"),
    })
}

impl DynamoDbStore {
    /// A store on `table`, called with `client`.
    pub(crate) fn new(client: Client, table: impl Into<String>) -> Self {
        Self { client, table: table.into() }
    }

    /// A held-claim call's answer: refused by its condition → [`StoreError::NotHeld`].
    fn held_answer<T, E, R>(
        &self,
        operation: &'static str,
        sent: Result<T, SdkError<E, R>>,
        refused: impl Fn(&E) -> bool,
    ) -> Result<(), StoreError>
    where
        E: std::error::Error + Send + Sync + 'static,
        R: std::fmt::Debug + Send + Sync + 'static,
    {
        match sent {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(&refused) => Err(StoreError::NotHeld),
            Err(e) => Err(self.failed(operation, e)),
        }
    }

    fn failed(
        &self,
        operation: &'static str,
        error: impl Into<backpressure_core::error::BoxError>,
    ) -> StoreError {
        StoreError::Table { table: self.table.clone(), source: ApiError::new(operation, error) }
    }

    async fn read_completed(
        &self,
        ids: &[String],
        now: SystemTime,
        found: &mut HashMap<String, ClaimOutcome>,
    ) -> Result<(), StoreError> {
        let keys = ids.iter().map(|id| key(id)).collect::<Vec<_>>();
        let mut request = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .projection_expression(
                "id, #status, expiration, in_progress_expiration, validation, #data",
            )
            .expression_attribute_names("#status", "status")
            .expression_attribute_names("#data", "data")
            .build()
            .map_err(|e| self.failed("BatchGetItem", e))?;
        for round in 0..=UNPROCESSED_ROUNDS {
            let output = self
                .client
                .batch_get_item()
                .request_items(&self.table, request)
                .send()
                .await
                .map_err(|e| self.failed("BatchGetItem", e))?;
            for item in output.responses().and_then(|r| r.get(&self.table)).into_iter().flatten() {
                let Some(id) = item.get("id").and_then(|v| v.as_s().ok()) else { continue };
                let Ok(record) = parse(id, item) else { continue };
                if let Some(completed @ ClaimOutcome::Completed { .. }) = record.found(now) {
                    found.insert(id.clone(), completed);
                }
            }
            match output.unprocessed_keys().and_then(|u| u.get(&self.table)) {
                Some(left) if !left.keys().is_empty() && round < UNPROCESSED_ROUNDS => {
                    request = left.clone();
                    tokio::time::sleep(Duration::from_millis(50 << round)).await;
                }
                // What is still unread is claimed message by message.
                _ => break,
            }
        }
        Ok(())
    }

    /// The record stored for `id`, read consistently.
    async fn get(&self, id: &str) -> Result<Option<StoredRecord>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.failed("GetItem", e))?;
        output.item().map(|item| parse(id, item)).transpose()
    }

    async fn put_claim(&self, request: &ClaimRequest<'_>) -> Result<Put, StoreError> {
        let record = request.record();
        let now_ms = epoch_ms(request.now);
        let item = HashMap::from([
            ("id".to_owned(), s(request.id)),
            ("status".to_owned(), s(record.status.as_str())),
            ("expiration".to_owned(), n(record.expiration)),
            ("in_progress_expiration".to_owned(), n(record.in_progress_until)),
            ("validation".to_owned(), s(&record.validation)),
            ("holder".to_owned(), s(&record.holder)),
        ]);
        let values = HashMap::from([
            (":now_s".to_owned(), n(now_ms / 1000)),
            (":now_ms".to_owned(), n(now_ms)),
            (":in_progress".to_owned(), s(Status::InProgress.as_str())),
        ]);
        let sent = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(CLAIMABLE)
            .set_expression_attribute_names(Some(names()))
            .set_expression_attribute_values(Some(values))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match sent {
            Ok(_) => Ok(Put::Written),
            Err(e) => match e.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(refused)) => {
                    let old = refused.item().map(|item| parse(request.id, item)).transpose()?;
                    match old {
                        Some(old) => Ok(Put::Refused(Some(old))),
                        None => self.get(request.id).await.map(Put::Refused),
                    }
                }
                _ => Err(self.failed("PutItem", e)),
            },
        }
    }

    async fn update_held(
        &self,
        operation: &'static str,
        id: &str,
        holder: &str,
        update: &str,
        mut values: HashMap<String, AttributeValue>,
    ) -> Result<(), StoreError> {
        values.extend(held_values(holder));
        let mut names = names();
        if update.contains("#data") {
            names.insert("#data".to_owned(), "data".to_owned());
        }
        let sent = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(id)))
            .update_expression(update)
            .condition_expression(HELD)
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
            .send()
            .await;
        let refused = |e: &UpdateItemError| e.is_conditional_check_failed_exception();
        self.held_answer(operation, sent, refused)
    }
}

impl IdempotencyStore for DynamoDbStore {
    /// Reads one id no claim uses (it has no `#`), so a missing table, another
    /// region or a missing permission shows at start-up, not on every message.
    async fn check(&self) -> Result<(), StoreError> {
        self.get("startup-check").await.map(|_| ())
    }

    async fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> Result<HashMap<String, ClaimOutcome>, StoreError> {
        let LookupRequest { ids, now } = *request;
        let mut found = HashMap::new();
        for chunk in ids.chunks(MAX_KEYS) {
            self.read_completed(chunk, now, &mut found).await?;
        }
        Ok(found)
    }

    async fn claim(&self, request: &ClaimRequest<'_>) -> Result<ClaimOutcome, StoreError> {
        // A record that stopped counting (or was deleted) between the refused
        // write and its read back is claimable: one more write decides. Only a
        // write that landed is a claim; a refusal never is.
        for _ in 0..2 {
            let old = match self.put_claim(request).await? {
                Put::Written => return Ok(ClaimOutcome::Claimed),
                Put::Refused(None) => continue,
                Put::Refused(Some(old)) => old,
            };
            // The SDK retried a claim whose answer was lost: the record is ours.
            if old.held_by(request.holder) {
                return Ok(ClaimOutcome::Claimed);
            }
            if let Some(found) = old.found(SystemTime::now()) {
                return Ok(found);
            }
        }
        Err(unreadable(
            request.id,
            "the claim's write was refused twice, and no record that refuses it could be read \
             (the table answers inconsistently); the message is retried unprocessed",
        ))
    }

    async fn complete(&self, request: &CompleteRequest<'_>) -> Result<(), StoreError> {
        let CompleteRequest { id, holder, expiration, data } = *request;
        let mut values = HashMap::from([
            (":completed".to_owned(), s(Status::Completed.as_str())),
            (":expiration".to_owned(), n(epoch_s_ceil(expiration))),
        ]);
        let update = match data {
            Some(data) => {
                values.insert(":data".to_owned(), s(data));
                "SET #status = :completed, expiration = :expiration, #data = :data"
            }
            None => "SET #status = :completed, expiration = :expiration",
        };
        match self.update_held("UpdateItem", id, holder, update, values).await {
            // The SDK retried a completion whose answer was lost: the first
            // landed, so the retry's condition failed on our own record.
            Err(StoreError::NotHeld) => match self.get(id).await? {
                Some(record) if record.status == Status::Completed && record.holder == holder => {
                    Ok(())
                }
                _ => Err(StoreError::NotHeld),
            },
            answer => answer,
        }
    }

    async fn renew(&self, request: &RenewRequest<'_>) -> Result<(), StoreError> {
        let RenewRequest { id, holder, lease_until } = *request;
        let values = HashMap::from([
            (":until".to_owned(), n(epoch_ms(lease_until))),
            (":expiration".to_owned(), n(epoch_s_ceil(lease_until))),
        ]);
        let update = "SET in_progress_expiration = :until, expiration = :expiration";
        self.update_held("UpdateItem", id, holder, update, values).await
    }

    async fn release(&self, request: &ReleaseRequest<'_>) -> Result<(), StoreError> {
        let ReleaseRequest { id, holder } = *request;
        let values = held_values(holder);
        let sent = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(id)))
            .condition_expression(HELD)
            .set_expression_attribute_names(Some(names()))
            .set_expression_attribute_values(Some(values))
            .send()
            .await;
        let refused = |e: &DeleteItemError| e.is_conditional_check_failed_exception();
        match self.held_answer("DeleteItem", sent, refused) {
            // Gone: released by this call's first attempt, whose answer was lost.
            Err(StoreError::NotHeld) if self.get(id).await?.is_none() => Ok(()),
            answer => answer,
        }
    }
}

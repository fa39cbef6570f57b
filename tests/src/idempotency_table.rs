//! The idempotency table on moto's DynamoDB: created the way the template
//! creates it (partition key `id`, TTL on `expiration`), and read back.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType, TimeToLiveSpecification,
};

use crate::fixtures::{BoxError, unique};

/// A fresh idempotency table.
#[derive(Debug)]
pub struct Table {
    pub client: aws_sdk_dynamodb::Client,
    pub name: String,
}

impl Table {
    /// Creates a table on the DynamoDB at `AWS_ENDPOINT_URL_DYNAMODB`.
    pub async fn create() -> Result<Self, BoxError> {
        if std::env::var_os("AWS_ENDPOINT_URL_DYNAMODB").is_none() {
            return Err(
                "AWS_ENDPOINT_URL_DYNAMODB is not set: run the tests with `make test`".into()
            );
        }
        let client = aws_sdk_dynamodb::Client::new(&aws_config::load_from_env().await);
        let name = unique("idempotency");
        client
            .create_table()
            .table_name(&name)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("id")
                    .attribute_type(ScalarAttributeType::S)
                    .build()?,
            )
            .key_schema(
                KeySchemaElement::builder().attribute_name("id").key_type(KeyType::Hash).build()?,
            )
            .send()
            .await?;
        client
            .update_time_to_live()
            .table_name(&name)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .attribute_name("expiration")
                    .enabled(true)
                    .build()?,
            )
            .send()
            .await?;
        Ok(Self { client, name })
    }

    /// Every record, keyed by id, each as attribute name → text.
    pub async fn records(&self) -> Result<HashMap<String, HashMap<String, String>>, BoxError> {
        let scanned = self.client.scan().table_name(&self.name).send().await?;
        let text = |value: &AttributeValue| match value {
            AttributeValue::S(s) | AttributeValue::N(s) => s.clone(),
            other => format!("{other:?}"),
        };
        Ok(scanned
            .items()
            .iter()
            .map(|item| {
                let fields: HashMap<String, String> =
                    item.iter().map(|(k, v)| (k.clone(), text(v))).collect();
                (fields.get("id").cloned().unwrap_or_default(), fields)
            })
            .collect())
    }
}

/// The claim stores the consumers take: the DynamoDB table on moto, or Redis
/// (Debian's redis-server at `E2E_REDIS_URL`) under a key prefix of the test's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    DynamoDb,
    Redis,
}

/// One test's claim store.
#[derive(Debug)]
pub enum ClaimStore {
    DynamoDb(Table),
    Redis { url: String, prefix: String },
}

impl ClaimStore {
    pub async fn create(kind: StoreKind) -> Result<Self, BoxError> {
        Ok(match kind {
            StoreKind::DynamoDb => Self::DynamoDb(Table::create().await?),
            StoreKind::Redis => Self::Redis {
                url: std::env::var("E2E_REDIS_URL")
                    .map_err(|_| "E2E_REDIS_URL is not set: run the tests with `make test`")?,
                prefix: unique("test") + ":",
            },
        })
    }

    /// The variables that point a consumer at it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::DynamoDb(table) => vec![("IDEMPOTENCY_TABLE", table.name.clone())],
            Self::Redis { url, prefix } => {
                vec![
                    ("IDEMPOTENCY_REDIS_URL", url.clone()),
                    ("IDEMPOTENCY_KEY_PREFIX", prefix.clone()),
                ]
            }
        }
    }

    /// `IDEMPOTENCY_KEY_PREFIX`: `""` for a table (one each), a unique one in Redis.
    pub fn prefix(&self) -> &str {
        match self {
            Self::DynamoDb(_) => "",
            Self::Redis { prefix, .. } => prefix,
        }
    }

    /// Every record, keyed by id, each as field → text.
    pub async fn records(&self) -> Result<HashMap<String, HashMap<String, String>>, BoxError> {
        let (url, prefix) = match self {
            Self::DynamoDb(table) => return table.records().await,
            Self::Redis { url, prefix } => (url, prefix),
        };
        let client = redis::Client::open(url.as_str())?;
        let mut connection = client.get_multiplexed_async_connection().await?;
        let keys: Vec<String> =
            // An id begins with its prefix's length and the prefix (`record_id`).
            redis::cmd("KEYS").arg(format!("{}:{prefix}*", prefix.len())).query_async(&mut connection).await?;
        let mut records = HashMap::new();
        for key in keys {
            let fields: HashMap<String, String> =
                redis::cmd("HGETALL").arg(&key).query_async(&mut connection).await?;
            records.insert(key, fields);
        }
        Ok(records)
    }
}

//! Fixtures on the emulators (moto_server for SQS and ECS, LocalStack for
//! CloudWatch). Clients are routed by the standard `AWS_ENDPOINT_URL_<SERVICE>`
//! variables that `scripts/emulators.sh run` sets.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, Statistic};
use aws_sdk_ecs::types::{ContainerDefinition, NetworkMode};
use aws_sdk_sqs::types::{Message, QueueAttributeName, SendMessageBatchRequestEntry};
use serde_json::{Value, json};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The variables that route each SDK client (the functions' and the tests') to the emulators.
pub const ENDPOINT_VARS: [&str; 4] = [
    "AWS_ENDPOINT_URL_SQS",
    "AWS_ENDPOINT_URL_ECS",
    "AWS_ENDPOINT_URL_CLOUDWATCH",
    "AWS_ENDPOINT_URL_S3",
];

/// A name no other test in this run uses, so tests can share the emulators.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    format!("{prefix}-{}-{}-{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The profile directory (`target/debug`) this program was built into:
/// wherever `CARGO_TARGET_DIR` or a cargo config put it. Test binaries live
/// one level down, in `deps/`.
pub fn profile_dir() -> Result<PathBuf, BoxError> {
    let exe = std::env::current_exe()
        .map_err(|error| format!("cannot tell where this program runs from: {error}"))?;
    let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.pop();
    }
    Ok(dir)
}

/// The path of a workspace binary, built next to this program by `make test`
/// or `make demo` before the tests run.
pub fn binary(name: &str) -> Result<PathBuf, BoxError> {
    let path = profile_dir()?.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: run `make test` or `make demo` (each builds the binaries first)",
            path.display()
        )
        .into())
    }
}

/// An SQS event record as Lambda delivers it, received just now (the backoff
/// only extends leases younger than SQS's 12 hours).
pub fn sqs_record(id: &str, body: Value, event_source_arn: &str) -> Value {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis();
    let now = now.to_string();
    json!({
        "messageId": id, "receiptHandle": format!("handle-{id}"), "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": now,
                       "ApproximateFirstReceiveTimestamp": now},
        "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": event_source_arn, "awsRegion": "us-east-1"
    })
}

/// One publisher target on the emulators: a queue and the service that drains it.
#[derive(Debug, Clone)]
pub struct PublisherTarget {
    pub queue_url: String,
    pub queue: String,
    pub cluster: String,
    pub service: String,
}

impl PublisherTarget {
    /// A new queue holding `messages`, drained by a new service of `cluster`
    /// with `running` tasks.
    pub async fn create(
        aws: &Aws,
        cluster: &str,
        messages: usize,
        running: i32,
    ) -> Result<Self, BoxError> {
        let queue = unique("work");
        let queue_url = aws.create_queue(&queue).await?;
        aws.send_messages(&queue_url, messages).await?;
        let service = unique("svc");
        aws.create_service(cluster, &service, running).await?;
        Ok(Self { queue_url, queue, cluster: cluster.to_owned(), service })
    }

    /// The single-target configuration variables.
    pub fn env(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("QUEUE_URL", self.queue_url.as_str()),
            ("ECS_CLUSTER_NAME", self.cluster.as_str()),
            ("ECS_SERVICE_NAME", self.service.as_str()),
        ]
    }

    /// This target as one element of `TARGETS`.
    pub fn json(&self) -> String {
        json!({"queueUrl": self.queue_url, "cluster": self.cluster, "service": self.service})
            .to_string()
    }

    /// One of its metrics as published under `namespace`, read back.
    pub async fn metric(
        &self,
        aws: &Aws,
        namespace: &str,
        metric: &str,
    ) -> Result<Vec<f64>, BoxError> {
        let target = [self.cluster.as_str(), self.service.as_str(), self.queue.as_str()];
        aws.target_metric(namespace, metric, target).await
    }
}

/// A quarantine record read back from its queue, with its message attributes.
#[derive(Debug, Clone)]
pub struct Quarantined {
    pub record: Value,
    pub attributes: HashMap<String, String>,
}

impl Quarantined {
    pub fn message_id(&self) -> &str {
        self.record["messageId"].as_str().unwrap_or_default()
    }
}

/// The SQS implementations a test of SQS's own behaviour runs on: each
/// catches what another hides (docs/testing.md lists how they differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sqs {
    Moto,
    LocalStack,
    /// fauxqs, the fast one: thousands of messages a second where moto takes tens.
    Fauxqs,
}

impl Sqs {
    /// Its endpoint, from the variables `scripts/emulators.sh run` sets.
    pub fn endpoint(self) -> Result<String, BoxError> {
        let name = match self {
            Sqs::Moto => "AWS_ENDPOINT_URL_SQS",
            Sqs::LocalStack => "E2E_LOCALSTACK_SQS",
            Sqs::Fauxqs => "E2E_FAUXQS_SQS",
        };
        std::env::var(name).map_err(|_| {
            format!("{name} is not set: run the end-to-end tests with `make test`").into()
        })
    }
}

#[derive(Debug, Clone)]
pub struct Aws {
    pub sqs: aws_sdk_sqs::Client,
    pub ecs: aws_sdk_ecs::Client,
    pub cloudwatch: aws_sdk_cloudwatch::Client,
    pub s3: aws_sdk_s3::Client,
}

impl Aws {
    /// Clients on the emulators. Fails, rather than reaching real AWS, when
    /// the endpoint variables are not set.
    pub async fn from_env() -> Result<Self, BoxError> {
        for name in ENDPOINT_VARS {
            if std::env::var_os(name).is_none() {
                return Err(format!(
                    "{name} is not set: run the end-to-end tests with `make test` \
                     (scripts/emulators.sh run -- cargo test) so they reach the emulators"
                )
                .into());
            }
        }
        let config = aws_config::load_from_env().await;
        Ok(Self {
            sqs: aws_sdk_sqs::Client::new(&config),
            ecs: aws_sdk_ecs::Client::new(&config),
            cloudwatch: aws_sdk_cloudwatch::Client::new(&config),
            s3: aws_sdk_s3::Client::new(&config),
        })
    }

    /// A new bucket, for quarantined bodies too large for their queue.
    pub async fn create_bucket(&self, name: &str) -> Result<(), BoxError> {
        self.s3.create_bucket().bucket(name).send().await?;
        Ok(())
    }

    /// The object's bytes, or `None` when there is no such object.
    pub async fn object(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BoxError> {
        match self.s3.get_object().bucket(bucket).key(key).send().await {
            Ok(output) => Ok(Some(output.body.collect().await?.into_bytes().to_vec())),
            Err(error) if error.as_service_error().is_some_and(|e| e.is_no_such_key()) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// The same clients, SQS on the implementation `sqs` names instead.
    pub async fn with_sqs(&self, sqs: Sqs) -> Result<Self, BoxError> {
        let config = aws_config::load_from_env().await;
        let sqs_config =
            aws_sdk_sqs::config::Builder::from(&config).endpoint_url(sqs.endpoint()?).build();
        Ok(Self { sqs: aws_sdk_sqs::Client::from_conf(sqs_config), ..self.clone() })
    }

    /// Every message of `url`, deleted as received: per message group, the
    /// bodies in the order SQS handed them out.
    pub async fn drain_by_group(
        &self,
        url: &str,
    ) -> Result<std::collections::BTreeMap<String, Vec<String>>, BoxError> {
        use aws_sdk_sqs::types::MessageSystemAttributeName;
        let mut groups: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        let mut empty = 0;
        while empty < 3 {
            let output = self
                .sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .message_system_attribute_names(MessageSystemAttributeName::MessageGroupId)
                .wait_time_seconds(1)
                .send()
                .await?;
            if output.messages().is_empty() {
                empty += 1;
                continue;
            }
            for message in output.messages() {
                let group = message
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::MessageGroupId))
                    .cloned()
                    .unwrap_or_default();
                let body = message.body().unwrap_or_default().to_owned();
                groups.entry(group).or_default().push(body);
                let handle = message.receipt_handle().unwrap_or_default();
                self.sqs.delete_message().queue_url(url).receipt_handle(handle).send().await?;
            }
        }
        Ok(groups)
    }

    pub async fn create_queue(&self, name: &str) -> Result<String, BoxError> {
        let output = self.sqs.create_queue().queue_name(name).send().await?;
        output.queue_url.ok_or_else(|| "CreateQueue returned no URL".into())
    }

    pub async fn queue_arn(&self, url: &str) -> Result<String, BoxError> {
        let output = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await?;
        output
            .attributes
            .and_then(|mut a| a.remove(&QueueAttributeName::QueueArn))
            .ok_or_else(|| "GetQueueAttributes returned no QueueArn".into())
    }

    /// A queue whose redrive policy sends to a new dead-letter queue.
    /// Returns (queue URL, dead-letter queue URL).
    pub async fn create_queue_with_dlq(&self, name: &str) -> Result<(String, String), BoxError> {
        let dlq = self.create_queue(&format!("{name}-dlq")).await?;
        let dlq_arn = self.queue_arn(&dlq).await?;
        let policy = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"5"}}"#);
        let output = self
            .sqs
            .create_queue()
            .queue_name(name)
            .attributes(QueueAttributeName::RedrivePolicy, policy)
            .send()
            .await?;
        let url = output.queue_url.ok_or("CreateQueue returned no URL")?;
        Ok((url, dlq))
    }

    pub async fn send_messages(&self, url: &str, count: usize) -> Result<(), BoxError> {
        let bodies: Vec<String> = (0..count).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
        for chunk in bodies.chunks(10) {
            self.send_batch(url, chunk).await?;
        }
        Ok(())
    }

    /// `(visible, in flight)` on a queue, as SQS counts them.
    pub async fn counts(&self, url: &str) -> Result<(u64, u64), BoxError> {
        let output = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await?;
        let attributes = output.attributes.ok_or("GetQueueAttributes returned no attributes")?;
        let count = |name: QueueAttributeName| -> Result<u64, BoxError> {
            let value = attributes.get(&name).ok_or_else(|| format!("no {name} in the answer"))?;
            Ok(value.parse()?)
        };
        Ok((
            count(QueueAttributeName::ApproximateNumberOfMessages)?,
            count(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)?,
        ))
    }

    /// Reads the queue's counts every `every` until they are `wanted`; an
    /// error naming the last counts once `within` has passed.
    pub async fn wait_for_counts(
        &self,
        url: &str,
        wanted: (u64, u64),
        within: Duration,
        every: Duration,
    ) -> Result<(), BoxError> {
        let give_up = tokio::time::Instant::now() + within;
        loop {
            let counts = self.counts(url).await?;
            if counts == wanted {
                return Ok(());
            }
            if tokio::time::Instant::now() > give_up {
                return Err(format!(
                    "(visible, in flight) {counts:?}, not {wanted:?} after {within:?}"
                )
                .into());
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Up to ten bodies in one SendMessageBatch; an error if any entry failed.
    pub async fn send_batch(&self, url: &str, bodies: &[String]) -> Result<(), BoxError> {
        let entries = bodies
            .iter()
            .enumerate()
            .map(|(i, body)| {
                SendMessageBatchRequestEntry::builder()
                    .id(format!("m{i}"))
                    .message_body(body)
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let output =
            self.sqs.send_message_batch().queue_url(url).set_entries(Some(entries)).send().await?;
        if !output.failed.is_empty() {
            return Err(format!("SendMessageBatch failed for {:?}", output.failed).into());
        }
        Ok(())
    }

    /// Every message on a queue, with its message attributes, until `expected`
    /// have arrived or the queue stays empty for a few polls. Messages stay
    /// in flight, so a second call does not see them again.
    pub async fn receive_all(&self, url: &str, expected: usize) -> Result<Vec<Message>, BoxError> {
        let mut messages = Vec::new();
        let mut empty_polls = 0;
        while messages.len() < expected && empty_polls < 3 {
            let output = self
                .sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .message_attribute_names("All")
                .visibility_timeout(300)
                .send()
                .await?;
            let batch = output.messages.unwrap_or_default();
            if batch.is_empty() {
                empty_polls += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            messages.extend(batch);
        }
        Ok(messages)
    }

    /// The quarantine records on a queue (see `receive_all`).
    pub async fn quarantined(
        &self,
        url: &str,
        expected: usize,
    ) -> Result<Vec<Quarantined>, BoxError> {
        let mut records = Vec::new();
        for message in self.receive_all(url, expected).await? {
            let record: Value = serde_json::from_str(message.body().unwrap_or_default())?;
            let attributes = message
                .message_attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.clone(), v.string_value().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            records.push(Quarantined { record, attributes });
        }
        Ok(records)
    }

    /// Receives and deletes every quarantine record on a queue, returning
    /// their messageIds; for long runs, where a queue that keeps growing makes
    /// the emulator slower with every call.
    pub async fn drain_quarantined(&self, url: &str) -> Result<Vec<String>, BoxError> {
        let mut ids = Vec::new();
        loop {
            let output = self
                .sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .visibility_timeout(300)
                .send()
                .await?;
            let batch = output.messages.unwrap_or_default();
            if batch.is_empty() {
                return Ok(ids);
            }
            let mut entries = Vec::with_capacity(batch.len());
            for (index, message) in batch.iter().enumerate() {
                let record: Value = serde_json::from_str(message.body().unwrap_or_default())?;
                ids.push(record["messageId"].as_str().unwrap_or_default().to_owned());
                entries.push(
                    aws_sdk_sqs::types::DeleteMessageBatchRequestEntry::builder()
                        .id(format!("d{index}"))
                        .receipt_handle(message.receipt_handle().unwrap_or_default())
                        .build()?,
                );
            }
            self.sqs
                .delete_message_batch()
                .queue_url(url)
                .set_entries(Some(entries))
                .send()
                .await?;
        }
    }

    pub async fn delete_queue(&self, url: &str) -> Result<(), BoxError> {
        self.sqs.delete_queue().queue_url(url).send().await?;
        Ok(())
    }

    /// A cluster and a service with `running` running tasks. moto starts a
    /// new service with none running; `UpdateService` sets running = desired.
    pub async fn create_service(
        &self,
        cluster: &str,
        service: &str,
        running: i32,
    ) -> Result<(), BoxError> {
        self.ecs.create_cluster().cluster_name(cluster).send().await?;
        let family = format!("{service}-task");
        self.ecs
            .register_task_definition()
            .family(&family)
            .network_mode(NetworkMode::Bridge)
            .container_definitions(
                ContainerDefinition::builder()
                    .name("worker")
                    .image("worker:latest")
                    .memory(128)
                    .build(),
            )
            .send()
            .await?;
        self.ecs
            .create_service()
            .cluster(cluster)
            .service_name(service)
            .task_definition(&family)
            .desired_count(0)
            .send()
            .await?;
        self.ecs
            .update_service()
            .cluster(cluster)
            .service(service)
            .desired_count(running)
            .send()
            .await?;
        Ok(())
    }

    /// One publisher target's metric (dimensioned by cluster, service and
    /// queue name) over the last ten minutes, oldest first.
    pub async fn target_metric(
        &self,
        namespace: &str,
        metric: &str,
        [cluster, service, queue]: [&str; 3],
    ) -> Result<Vec<f64>, BoxError> {
        let dimensions = [("ClusterName", cluster), ("ServiceName", service), ("QueueName", queue)];
        self.metric_averages(namespace, metric, &dimensions, Duration::from_secs(600)).await
    }

    /// The datapoints' average of one metric over the last `window`, as
    /// CloudWatch returns them (oldest first).
    pub async fn metric_averages(
        &self,
        namespace: &str,
        metric: &str,
        dimensions: &[(&str, &str)],
        window: Duration,
    ) -> Result<Vec<f64>, BoxError> {
        let now = SystemTime::now();
        let output = self
            .cloudwatch
            .get_metric_statistics()
            .namespace(namespace)
            .metric_name(metric)
            .set_dimensions(Some(
                dimensions
                    .iter()
                    .map(|(n, v)| Dimension::builder().name(*n).value(*v).build())
                    .collect(),
            ))
            .start_time(DateTime::from(now - window))
            .end_time(DateTime::from(now + Duration::from_secs(60)))
            .period(60)
            .statistics(Statistic::Average)
            .send()
            .await?;
        let mut points = output.datapoints.unwrap_or_default();
        points.sort_by_key(|p| p.timestamp.map(|t| t.secs()));
        Ok(points.iter().filter_map(|p| p.average).collect())
    }
}

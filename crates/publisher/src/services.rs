//! What the publisher's AWS reads return, and the metric sink it writes to
//! (a trait: the CloudWatch adapter and the tests' stalling sink implement it).

use std::future::Future;

use crate::backlog::{QueueCounts, ServiceCounts};
use crate::metrics::Datum;
use backpressure_core::error::ApiError;

/// What one `GetQueueAttributes` call says about a queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueAttributes {
    /// Visible, in-flight and delayed messages.
    pub counts: QueueCounts,
    /// The raw `RedrivePolicy` attribute, when the queue has one.
    pub redrive_policy: Option<String>,
}

/// One service as `DescribeServices` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedService {
    /// The service's name.
    pub name: String,
    /// The service's ARN.
    pub arn: String,
    /// `ACTIVE`, `DRAINING` or `INACTIVE`.
    pub status: String,
    /// Its task counts.
    pub counts: ServiceCounts,
}

/// `DescribeServices` reports unknown services as failures, not as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceFailure {
    /// The service asked for.
    pub arn: String,
    /// ECS's reason, such as `MISSING`.
    pub reason: String,
}

/// One `DescribeServices` answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescribedServices {
    /// The services found.
    pub services: Vec<DescribedService>,
    /// The services ECS could not describe.
    pub failures: Vec<ServiceFailure>,
}

/// Why a service's task count cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceLookupError {
    /// ECS does not know the service.
    #[error("service not found ({reason})")]
    Missing {
        /// ECS's reason, such as `MISSING`.
        reason: String,
    },
    /// The service is draining or deleted.
    #[error("service status is {status}, not ACTIVE")]
    NotActive {
        /// `DRAINING` or `INACTIVE`.
        status: String,
    },
}

impl DescribedServices {
    /// The counts of one requested service, asked for by name or by ARN. A
    /// service that is draining or deleted has no meaningful task count for
    /// scaling, so it is an error.
    pub fn counts_for(&self, service: &str) -> Result<ServiceCounts, ServiceLookupError> {
        let found = if service.starts_with("arn:") {
            self.services.iter().find(|s| s.arn == service)
        } else {
            self.services.iter().find(|s| s.name == service)
        };
        if let Some(found) = found {
            return if found.status == "ACTIVE" {
                Ok(found.counts)
            } else {
                Err(ServiceLookupError::NotActive { status: found.status.clone() })
            };
        }
        let reason = self
            .failures
            .iter()
            .find(|f| f.arn == service || f.arn.ends_with(&format!("/{service}")))
            .map_or_else(|| "absent from the response".to_owned(), |f| f.reason.clone());
        Err(ServiceLookupError::Missing { reason })
    }
}

/// `DescribeServices` accepts at most 10 services per call.
pub const MAX_SERVICES_PER_DESCRIBE: usize = 10;

/// Where the datums go: CloudWatch, or a test double.
pub trait MetricSink: Send + Sync {
    /// Publishes at most [`crate::metrics::MAX_DATUMS_PER_REQUEST`] datums in one request.
    fn put_metric_data(
        &self,
        datums: &[Datum],
    ) -> impl Future<Output = Result<(), ApiError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described() -> DescribedServices {
        DescribedServices {
            services: vec![
                DescribedService {
                    name: "live".into(),
                    arn: "arn:aws:ecs:eu-west-1:1:service/c/live".into(),
                    status: "ACTIVE".into(),
                    counts: ServiceCounts { running: 2, pending: 1, desired: 3 },
                },
                DescribedService {
                    name: "gone".into(),
                    arn: "arn:aws:ecs:eu-west-1:1:service/c/gone".into(),
                    status: "INACTIVE".into(),
                    counts: ServiceCounts::default(),
                },
            ],
            failures: vec![ServiceFailure {
                arn: "arn:aws:ecs:eu-west-1:1:service/c/missing".into(),
                reason: "MISSING".into(),
            }],
        }
    }

    #[test]
    fn finds_active_services_and_explains_the_rest() {
        let described = described();
        assert_eq!(described.counts_for("live").unwrap().running, 2);
        let by_arn = described.counts_for("arn:aws:ecs:eu-west-1:1:service/c/live");
        assert_eq!(by_arn.unwrap().running, 2);
        assert!(described.counts_for("arn:aws:ecs:eu-west-1:1:service/other/live").is_err());
        assert_eq!(
            described.counts_for("arn:aws:ecs:eu-west-1:1:service/c/missing"),
            Err(ServiceLookupError::Missing { reason: "MISSING".into() })
        );
        assert_eq!(
            described.counts_for("gone"),
            Err(ServiceLookupError::NotActive { status: "INACTIVE".into() })
        );
        assert_eq!(
            described.counts_for("missing"),
            Err(ServiceLookupError::Missing { reason: "MISSING".into() })
        );
        assert_eq!(
            described.counts_for("other"),
            Err(ServiceLookupError::Missing { reason: "absent from the response".into() })
        );
    }
}

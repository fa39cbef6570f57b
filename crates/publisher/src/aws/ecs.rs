use crate::ServiceCounts;
use crate::services::{DescribedService, DescribedServices, ServiceFailure};
use aws_sdk_ecs::Client;
use backpressure_core::error::ApiError;
use backpressure_startup::LazyClient;

#[derive(Debug, Clone)]
pub struct EcsServices {
    client: LazyClient<Client>,
}

impl EcsServices {
    pub fn new(client: impl Into<LazyClient<Client>>) -> Self {
        Self { client: client.into() }
    }
}

/// ECS reports counts as i32; a negative count would be a service bug, and
/// clamping it to 0 is the least wrong reading.
fn count(value: i32) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl EcsServices {
    /// One `DescribeServices` call for at most ten services of a cluster.
    pub async fn describe_services(
        &self,
        cluster: &str,
        services: &[String],
    ) -> Result<DescribedServices, ApiError> {
        let output = self
            .client
            .get()
            .describe_services()
            .cluster(cluster)
            .set_services(Some(services.to_vec()))
            .send()
            .await
            .map_err(|e| ApiError::new("DescribeServices", e))?;
        Ok(DescribedServices {
            services: output
                .services()
                .iter()
                .map(|service| DescribedService {
                    name: service.service_name().unwrap_or_default().to_owned(),
                    arn: service.service_arn().unwrap_or_default().to_owned(),
                    status: service.status().unwrap_or_default().to_owned(),
                    counts: ServiceCounts {
                        running: count(service.running_count()),
                        pending: count(service.pending_count()),
                        desired: count(service.desired_count()),
                    },
                })
                .collect(),
            failures: output
                .failures()
                .iter()
                .map(|failure| ServiceFailure {
                    arn: failure.arn().unwrap_or_default().to_owned(),
                    reason: failure.reason().unwrap_or("unknown").to_owned(),
                })
                .collect(),
        })
    }
}

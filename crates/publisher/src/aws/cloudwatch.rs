use crate::StorageResolution;
use crate::metrics::{DIMENSION_NAMES, Datum, Unit};
use crate::services::MetricSink;
use aws_sdk_cloudwatch::Client;
use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit};
use backpressure_core::error::ApiError;
use backpressure_startup::LazyClient;

#[derive(Debug, Clone)]
pub struct CloudWatchSink {
    client: LazyClient<Client>,
    namespace: String,
    resolution: StorageResolution,
}

impl CloudWatchSink {
    pub fn new(
        client: impl Into<LazyClient<Client>>,
        namespace: String,
        resolution: StorageResolution,
    ) -> Self {
        Self { client: client.into(), namespace, resolution }
    }

    fn metric_datum(&self, datum: &Datum) -> MetricDatum {
        let dimensions = DIMENSION_NAMES
            .iter()
            .zip(&datum.dimensions)
            .map(|(name, value)| Dimension::builder().name(*name).value(value).build())
            .collect();
        MetricDatum::builder()
            .metric_name(datum.name)
            .value(datum.value)
            .unit(match datum.unit {
                Unit::Count => StandardUnit::Count,
                Unit::Percent => StandardUnit::Percent,
            })
            .set_dimensions(Some(dimensions))
            .timestamp(DateTime::from(datum.timestamp))
            .storage_resolution(self.resolution.seconds())
            .build()
    }
}

impl MetricSink for CloudWatchSink {
    async fn put_metric_data(&self, datums: &[Datum]) -> Result<(), ApiError> {
        self.client
            .get()
            .put_metric_data()
            .namespace(&self.namespace)
            .set_metric_data(Some(datums.iter().map(|d| self.metric_datum(d)).collect()))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| ApiError::new("PutMetricData", e))
    }
}

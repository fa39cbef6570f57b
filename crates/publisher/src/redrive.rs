//! The `RedrivePolicy` queue attribute.

use serde::Deserialize;

/// The `RedrivePolicy` attribute is not JSON with a `deadLetterTargetArn`.
#[derive(Debug, thiserror::Error)]
#[error("RedrivePolicy is not the JSON SQS documents")]
pub struct RedrivePolicyError(#[source] serde_json::Error);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedrivePolicy {
    dead_letter_target_arn: String,
}

/// The dead-letter queue's ARN from a `RedrivePolicy` attribute such as
/// `{"deadLetterTargetArn":"arn:aws:sqs:…:work-dlq","maxReceiveCount":"5"}`.
pub fn dead_letter_target_arn(redrive_policy: &str) -> Result<String, RedrivePolicyError> {
    serde_json::from_str::<RedrivePolicy>(redrive_policy)
        .map(|policy| policy.dead_letter_target_arn)
        .map_err(RedrivePolicyError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_dead_letter_arn() {
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:1:dlq","maxReceiveCount":5}"#;
        assert_eq!(dead_letter_target_arn(policy).unwrap(), "arn:aws:sqs:eu-west-1:1:dlq");
        assert!(dead_letter_target_arn("{}").is_err());
        assert!(dead_letter_target_arn("not json").is_err());
    }
}

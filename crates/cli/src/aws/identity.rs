//! Who calls AWS: the caller's ARN, as STS `GetCallerIdentity` names it.

use crate::terminal::error::CliError;

/// The caller's ARN: the operator a change's prompt and audit trail name,
/// and the reader `stats` names.
pub(crate) async fn operator(sts: &aws_sdk_sts::Client) -> Result<String, CliError> {
    let identity = sts
        .get_caller_identity()
        .send()
        .await
        .map_err(|e| CliError::Identity(Box::new(e.into())))?;
    Ok(identity.arn().unwrap_or("unknown").to_owned())
}

//! The AWS configuration a command runs with, checked before any call: a
//! named profile that exists, a region, the clients built once, and queue
//! URLs for what an operator may type instead (an ARN, a bare name).

use backpressure_core::queue::{QueueArn, is_queue_name};
use backpressure_startup::SdkSettings;

use crate::args::AwsArgs;
use crate::terminal::error::CliError;

/// The clients a command needs, built once.
#[derive(Debug, Clone)]
pub struct Clients {
    pub sqs: aws_sdk_sqs::Client,
    pub sts: aws_sdk_sts::Client,
    /// Bodies a quarantine record keeps in S3.
    pub s3: aws_sdk_s3::Client,
    /// The consumer a replay's canary waits on: its event source mapping and function.
    pub lambda: aws_sdk_lambda::Client,
}

/// The clients for `aws`, or a usage error naming what to set. In the region
/// the queue's ARN or AWS URL names (`queue`, as given), when it names one.
pub async fn connect(aws: &AwsArgs, queue: &str) -> Result<Clients, CliError> {
    let config = sdk_config(aws, queue).await?;
    Ok(Clients {
        sqs: aws_sdk_sqs::Client::new(&config),
        sts: aws_sdk_sts::Client::new(&config),
        s3: aws_sdk_s3::Client::new(&config),
        lambda: aws_sdk_lambda::Client::new(&config),
    })
}

/// The SDK's configuration for `aws`, checked as [`connect`] says.
pub async fn sdk_config(aws: &AwsArgs, queue: &str) -> Result<aws_types::SdkConfig, CliError> {
    let profile = aws.profile.clone().or_else(|| std::env::var("AWS_PROFILE").ok());
    if let Some(profile) = &profile {
        check_profile(profile, aws.profile.is_some()).await?;
    }
    let mut settings = SdkSettings::new(aws.call_timeout());
    settings.profile = aws.profile.clone();
    settings.region = aws.region.clone();
    settings.endpoint_url = aws.endpoint_url.clone();
    let mut config = backpressure_startup::sdk::load(&settings).await;
    // A queue lives in the region its ARN or URL names, whatever else is
    // configured: asked in another, SQS would answer for another queue.
    if let Some(region) = region_named_by(queue)
        && config.region().is_none_or(|configured| configured.as_ref() != region)
    {
        settings.region = Some(region);
        config = backpressure_startup::sdk::load(&settings).await;
    }
    if config.region().is_none() {
        return Err(CliError::Usage(
            "no AWS region is set: give --region, or set AWS_REGION or a region in the profile"
                .into(),
        ));
    }
    Ok(config)
}

/// The region a queue ARN or an AWS queue URL names (`sqs.REGION.amazonaws.com`,
/// or the legacy `REGION.queue.amazonaws.com`); none for a bare name or
/// another endpoint.
pub(crate) fn region_named_by(queue: &str) -> Option<String> {
    if queue.starts_with("arn:") {
        return QueueArn::parse(queue).ok().map(|arn| arn.region().to_owned());
    }
    let rest = queue.strip_prefix("https://").or_else(|| queue.strip_prefix("http://"))?;
    let host = rest.split(['/', ':']).next()?;
    let labels: Vec<&str> = host.split('.').collect();
    let region = match labels.as_slice() {
        ["sqs", region, "amazonaws", ..] | [region, "queue", "amazonaws", ..] => *region,
        _ => return None,
    };
    let is_region = !region.is_empty()
        && region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    is_region.then(|| region.to_owned())
}

/// A profile the AWS config files do not have is an error, not a silent
/// fall-back to the default chain.
async fn check_profile(name: &str, from_flag: bool) -> Result<(), CliError> {
    use aws_runtime::env_config::file::EnvConfigFiles;
    use aws_types::os_shim_internal::{Env, Fs};

    let set =
        aws_config::profile::load(&Fs::real(), &Env::real(), &EnvConfigFiles::default(), None)
            .await
            .map_err(|e| CliError::Usage(format!("the AWS config files cannot be read: {e}")))?;
    if set.get_profile(name).is_some() {
        return Ok(());
    }
    let mut known: Vec<&str> = set.profiles().collect();
    known.sort_unstable();
    let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
    let source = if from_flag { "--profile" } else { "AWS_PROFILE" };
    Err(CliError::Usage(format!(
        "{source} {name:?} is not a profile of the AWS config files (~/.aws/config, \
         ~/.aws/credentials, or AWS_CONFIG_FILE; profiles there: {known})"
    )))
}

/// The queue URL for what `flag` was given: a URL as it is, an SQS ARN or a
/// bare queue name looked up with `GetQueueUrl` (as the AWS CLI does).
pub(crate) async fn queue_url(
    sqs: &aws_sdk_sqs::Client,
    flag: &str,
    given: &str,
) -> Result<String, CliError> {
    if given.starts_with("https://") || given.starts_with("http://") {
        return Ok(given.to_owned());
    }
    if given.starts_with("arn:") {
        return url_of_arn(sqs, flag, given).await;
    }
    if !is_queue_name(given) {
        return Err(CliError::Usage(format!(
            "{flag} {given:?} is not a queue URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME), \
             an SQS queue ARN or a queue name"
        )));
    }
    look_up(sqs, given, given, None).await
}

/// The URL of the queue an SQS ARN names, in its owner's account; `what`
/// names where the ARN came from (a flag, a record's field).
pub(crate) async fn url_of_arn(
    sqs: &aws_sdk_sqs::Client,
    what: &str,
    arn: &str,
) -> Result<String, CliError> {
    let Ok(parsed) = QueueArn::parse(arn) else {
        return Err(CliError::Destination(format!(
            "{what} {arn:?} is not an SQS queue ARN: give --to"
        )));
    };
    let region = parsed.region();
    let ours = sqs.config().region().map(|r| r.as_ref().to_owned()).unwrap_or_default();
    if region != ours {
        let or_to = if what.starts_with("--") { "" } else { ", or give --to" };
        return Err(CliError::Usage(format!(
            "{what} {arn} is a queue in {region}, and the command runs in {ours}: add --region \
             {region}{or_to}"
        )));
    }
    look_up(sqs, arn, parsed.name(), Some(parsed.account())).await
}

async fn look_up(
    sqs: &aws_sdk_sqs::Client,
    given: &str,
    name: &str,
    account: Option<&str>,
) -> Result<String, CliError> {
    let output = sqs
        .get_queue_url()
        .queue_name(name)
        .set_queue_owner_aws_account_id(account.map(str::to_owned))
        .send()
        .await
        .map_err(|e| CliError::sqs("GetQueueUrl", given, e))?;
    output
        .queue_url()
        .map(str::to_owned)
        .ok_or_else(|| CliError::Destination(format!("GetQueueUrl returned no URL for {given}")))
}

#[cfg(test)]
mod tests {
    use super::region_named_by;

    #[test]
    fn the_region_comes_from_an_arn_or_an_aws_url() {
        let cases = [
            ("arn:aws:sqs:us-east-1:123456789012:orders", Some("us-east-1")),
            ("arn:aws-cn:sqs:cn-north-1:123456789012:orders.fifo", Some("cn-north-1")),
            ("https://sqs.eu-west-2.amazonaws.com/123456789012/orders", Some("eu-west-2")),
            ("https://sqs.cn-north-1.amazonaws.com.cn/123456789012/orders", Some("cn-north-1")),
            ("https://ap-south-1.queue.amazonaws.com/123456789012/orders", Some("ap-south-1")),
            ("http://127.0.0.1:5000/123456789012/orders", None),
            ("https://sqs.EVIL/x.amazonaws.com/1/q", None),
            ("orders", None),
            ("arn:aws:sqs:not-an-arn", None),
        ];
        for (given, region) in cases {
            assert_eq!(region_named_by(given).as_deref(), region, "{given}");
        }
    }
}

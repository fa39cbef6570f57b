//! The quarantine overflow bucket in `template.yaml`: private, encrypted,
//! unversioned, its objects outliving the records that name them, and
//! written, read and deleted only by those who must.

use serde_norway::Value;

use crate::template::{resource, statements, template, worker_env};

fn text(value: &Value) -> String {
    format!("{value:?}")
}

#[test]
fn the_bucket_is_private_encrypted_unversioned_and_outlives_its_records() {
    let template = template();
    let bucket = resource(&template, "QuarantineOverflowBucket");
    let block = &bucket["PublicAccessBlockConfiguration"];
    for setting in
        ["BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"]
    {
        assert_eq!(block[setting], true, "{setting}");
    }
    let encryption = &bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0];
    assert_eq!(encryption["ServerSideEncryptionByDefault"]["SSEAlgorithm"], "AES256");
    assert!(bucket.get("VersioningConfiguration").is_none(), "a deleted body stays deleted");
    let rule = &bucket["LifecycleConfiguration"]["Rules"][0];
    assert_eq!(rule["Status"], "Enabled");
    let retention_days =
        resource(&template, "QuarantineQueue")["MessageRetentionPeriod"].as_u64().unwrap() / 86_400;
    let expiry_days = rule["ExpirationInDays"].as_u64().unwrap();
    assert!(expiry_days > retention_days, "{expiry_days} d against a {retention_days} d record");
    let policy = text(&resource(&template, "QuarantineOverflowBucketPolicy")["PolicyDocument"]);
    assert!(policy.contains("aws:SecureTransport"), "TLS only: {policy}");
}

#[test]
fn the_functions_may_only_write_bodies_and_are_told_the_bucket() {
    let template = template();
    for role in ["ConsumerAccessPolicy", "WorkerTaskRole"] {
        let statements = statements(&template, role, 0);
        let overflow = statements.iter().find(|s| s["Sid"] == "QuarantineOverflow").unwrap();
        assert_eq!(overflow["Action"], "s3:PutObject", "{role}");
        assert!(text(&overflow["Resource"]).contains("${QuarantineOverflowBucket.Arn}/*"));
        let sid = |s: &&Value| s["Sid"].as_str().unwrap_or_default().to_owned();
        let s3: Vec<(String, String, String)> = statements
            .iter()
            .filter(|s| text(&s["Action"]).contains("s3:"))
            .map(|s| {
                (sid(s), s["Action"].as_str().unwrap_or_default().to_owned(), text(&s["Resource"]))
            })
            .collect();
        let offloaded = |(sid, action, resource): &(String, String, String)| {
            let on_bucket = resource.contains("${OffloadedPayloadBucket}");
            match sid.as_str() {
                "OffloadedPayloads" => action == "s3:GetObject" && on_bucket,
                "OffloadedPayloadsDeleted" => action == "s3:DeleteObject" && on_bucket,
                "OffloadedPayloadsMissingTold" => action == "s3:ListBucket" && on_bucket,
                _ => false,
            }
        };
        let others: Vec<_> =
            s3.iter().filter(|s| s.0 != "QuarantineOverflow" && !offloaded(s)).collect();
        assert!(others.is_empty(), "{role}: no other S3 access: {others:?}");
        assert_eq!(s3.len(), 4, "{role}: the overflow's and the offloaded payloads' three: {s3:?}");
    }
    let function = &resource(&template, "ConsumerFunction")["Environment"]["Variables"];
    assert!(text(&function["QUARANTINE_OVERFLOW_BUCKET"]).contains("QuarantineOverflowBucket"));
    let worker = worker_env(&template);
    assert!(text(&worker["QUARANTINE_OVERFLOW_BUCKET"]).contains("QuarantineOverflowBucket"));
}

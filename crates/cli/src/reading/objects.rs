//! Bodies kept in S3: a quarantine record too large for its queue names the
//! object that holds its message's body, with the body's size and SHA-256.
//! Each is read and checked before it is shown, exported or replayed, and
//! deleted once the record that names it is gone from the queue.

use aws_sdk_s3::Client;
use aws_sdk_s3::error::SdkError;
use aws_sdk_s3::operation::get_object::GetObjectError;
use backpressure_core::quarantine::BodyObject;
use futures::future::join_all;

use crate::reading::entry::Entry;
use crate::reading::filter::Filter;
use crate::terminal::explain::explain_sdk;

/// What a queue's reads fetch bodies for: the entries `filter` matches.
#[derive(Debug, Clone)]
pub(crate) struct Bodies {
    pub(crate) objects: Objects,
    pub(crate) filter: Filter,
}

/// The S3 client bodies are read and deleted with.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    pub(crate) s3: Client,
}

impl Objects {
    /// Reads the body of every entry in `entries` that keeps it in S3 and that
    /// `wanted` names: a body that is there and checks out becomes the
    /// entry's body; otherwise the entry says why in `body_problem`, and has
    /// no body to replay.
    pub(crate) async fn fetch(&self, entries: &mut [Entry], wanted: impl Fn(&Entry) -> bool) {
        let reads = entries
            .iter_mut()
            .filter(|entry| entry.body_object.is_some() && entry.body.is_none() && wanted(entry))
            .map(|entry| async move {
                let Some(object) = &entry.body_object else { return };
                match self.read(object).await {
                    Ok(body) => entry.read_from_s3(body),
                    Err(problem) => entry.body_problem = Some(problem),
                }
            });
        join_all(reads).await;
    }

    async fn read(&self, object: &BodyObject) -> Result<String, String> {
        let output = self.s3.get_object().bucket(&object.bucket).key(&object.key).send().await;
        let output = match output {
            Ok(output) => output,
            Err(SdkError::ServiceError(e)) if matches!(e.err(), GetObjectError::NoSuchKey(_)) => {
                return Err(format!(
                    "{} does not exist (deleted, or expired by the bucket's lifecycle rule)",
                    object.uri()
                ));
            }
            Err(error) => {
                let error = aws_sdk_s3::Error::from(error);
                return Err(format!(
                    "{} could not be read: {}",
                    object.uri(),
                    explain_sdk(&error, "GetObject")
                ));
            }
        };
        let bytes = output
            .body
            .collect()
            .await
            .map_err(|e| format!("{} could not be read to its end: {e}", object.uri()))?;
        let bytes = bytes.into_bytes();
        object.check(&bytes)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| format!("{} is not UTF-8 text, as a message body is", object.uri()))
    }

    /// Deletes `objects`; each result is `Ok` or S3's reason.
    pub(crate) async fn delete(&self, objects: &[&BodyObject]) -> Vec<Result<(), String>> {
        let deletes = objects.iter().map(|object| async move {
            let deleted =
                self.s3.delete_object().bucket(&object.bucket).key(&object.key).send().await;
            deleted
                .map(drop)
                .map_err(|error| explain_sdk(&aws_sdk_s3::Error::from(error), "DeleteObject"))
        });
        join_all(deletes).await
    }
}

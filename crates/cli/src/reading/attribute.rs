//! A message attribute as the queue reads keep it, and as a replay sends it back.

use aws_sdk_sqs::types::MessageAttributeValue;
use aws_smithy_types::{Blob, base64};
use serde::{Deserialize, Serialize};

/// A message attribute as SQS carries it; binary values base64 in JSON, as
/// Lambda delivers them and as quarantine records hold them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Attribute {
    pub(crate) data_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) string_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) binary_value: Option<String>,
}

impl Attribute {
    pub(crate) fn from_sdk(value: &MessageAttributeValue) -> Self {
        Self {
            data_type: value.data_type().to_owned(),
            string_value: value.string_value().map(str::to_owned),
            binary_value: value.binary_value().map(|blob| base64::encode(blob.as_ref())),
        }
    }

    /// The attribute as SQS takes it in a send, or why it cannot be one.
    pub(crate) fn to_sdk(&self) -> Result<MessageAttributeValue, String> {
        let mut value = MessageAttributeValue::builder().data_type(&self.data_type);
        if let Some(text) = &self.string_value {
            value = value.string_value(text);
        }
        if let Some(encoded) = &self.binary_value {
            let bytes =
                base64::decode(encoded).map_err(|e| format!("binary value is not base64: {e}"))?;
            value = value.binary_value(Blob::new(bytes));
        }
        value.build().map_err(|e| e.to_string())
    }
}

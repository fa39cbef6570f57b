//! The body the engine's own tests send: its `operation` scripts the test
//! processor, its `idempotencyKey` is claimed, its `tenantId` labels its
//! quarantine record.

use std::borrow::Cow;

use serde::Deserialize;

use crate::body::JsonBody;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TestRequest {
    pub(crate) operation: String,
    #[serde(default)]
    pub(crate) tenant_id: Option<String>,
    #[serde(default)]
    pub(crate) idempotency_key: Option<String>,
}

impl JsonBody for TestRequest {
    fn idempotency_key(&self) -> Option<Cow<'_, str>> {
        self.idempotency_key.as_deref().map(Cow::Borrowed)
    }

    fn tenant_id(&self) -> Option<Cow<'_, str>> {
        self.tenant_id.as_deref().map(Cow::Borrowed)
    }

    fn operation(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.operation))
    }
}

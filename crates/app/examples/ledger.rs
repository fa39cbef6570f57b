//! A Lambda function posting ledger entries: its own body type and processor; partial batch
//! responses, quarantine, FIFO order, the deadline guard, backoff and metrics come with the library,
//! and its settings from the variables template.yaml gives the consumer function.
use std::{borrow::Cow, convert::Infallible, process::ExitCode};

use backpressure_app::{Env, serve};
use backpressure_batch::{ContractViolation, ErrorCode, JsonBody, Message, Processor, Verdict};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Entry {
    account: String,
    cents: i64,
}

impl JsonBody for Entry {
    fn validate(&self) -> Result<(), ContractViolation> {
        let zero = || ContractViolation::new(ErrorCode::Custom("zero_amount".into()), "0 cents");
        if self.cents == 0 { Err(zero()) } else { Ok(()) }
    }
    // Labels for quarantine records, which the operator's CLI selects by (--tenant, --operation).
    fn tenant_id(&self) -> Option<Cow<'_, str>> {
        Some(self.account.as_str().into())
    }
    fn operation(&self) -> Option<Cow<'_, str>> {
        Some(if self.cents < 0 { "debit" } else { "credit" }.into())
    }
}

/// Entries for the frozen account wait (it may thaw); the rest are posted.
struct Ledger {
    frozen: Option<String>,
}

impl Processor<Entry> for Ledger {
    async fn process(&self, message: &Message<'_, Entry>) -> Verdict {
        if self.frozen.as_ref() == Some(&message.decoded.account) {
            return Verdict::retry("the account is frozen");
        }
        Verdict::Done
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let ledger = |env: &Env| Ok::<_, Infallible>(Ledger { frozen: env.get("FROZEN_ACCOUNT") });
    serve("ledger", "1.0", ledger).await
}

//! What a processor usually needs, in one import:
//! `use backpressure_batch::prelude::*;`

#[cfg(feature = "sqs")]
pub use crate::SqsQuarantine;
pub use crate::{
    BatchProcessor, Body, ContractViolation, ErrorCode, Message, Processor, SqsRecord, Validate,
    Verdict,
};

//! What a function embedding the library usually needs, in one import:
//! `use backpressure_batch::prelude::*;`

pub use crate::lambda::serve;
pub use crate::{
    BatchProcessor, Body, ContractViolation, ErrorCode, HttpDelivery, Message, Processor,
    SqsQuarantine, SqsRecord, Validate, Verdict, WorkRequest,
};
pub use backpressure_startup::Env;

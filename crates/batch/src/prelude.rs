//! What a function embedding the library usually needs, in one import:
//! `use backpressure_batch::prelude::*;`

pub use crate::delivery::{HttpDelivery, WorkRequest};
pub use crate::{
    BatchProcessor, Body, ContractViolation, Env, ErrorCode, Message, Processor, SqsQuarantine,
    SqsRecord, Validate, Verdict, serve,
};

//! Reading a queue without consuming it: each message classified (a
//! quarantine record or a raw dead-lettered message) and filtered, its body
//! fetched from S3 when a record keeps it there, every message held and its
//! lease kept while the read goes on, FIFO groups read past their head by
//! moving messages, what a read keeps per message spilled to disk past a
//! bound, and what the read saw against what the queue counted.

pub(crate) mod attribute;
pub(crate) mod entry;
pub(crate) mod fields;
pub(crate) mod filter;
pub mod lease;
pub(crate) mod objects;
pub(crate) mod origin;
pub(crate) mod received;
pub(crate) mod rotate;
pub(crate) mod scan;
pub(crate) mod scanned;
pub mod spill;

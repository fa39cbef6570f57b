//! Which records of a batch run together and in what order (FIFO groups),
//! and how many of one group may be in work at once (fair shares).

mod fair_share;
mod order;

pub(crate) use fair_share::{GroupLimits, admit, schedule};

//! The floor: the smallest function `lambda_runtime` runs (a current-thread
//! runtime, no log subscriber, no SDK), echoing how many records it was given.
//! `bench/run.sh init` times our functions' start-up against it.

use lambda_runtime::{Error, LambdaEvent, service_fn};
use serde_json::{Value, json};

async fn hello(event: LambdaEvent<Value>) -> Result<Value, Error> {
    let records = event.payload["Records"].as_array().map_or(0, Vec::len);
    Ok(json!({ "hello": "world", "records": records }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    lambda_runtime::run(service_fn(hello)).await
}

//! A backpressure-app worker's wiring in a service's task definition: is the container
//! ours, and does the quarantine queue it names exist?

use backpressure_core::config::variables::{Reader, read_by};

use super::{Clients, Limiters};
use crate::deployment::Deployment;

/// Whether a container setting `name` runs a worker on backpressure-app: a variable only such
/// a worker reads (`QUEUE_URL` alone could be anyone's).
pub(super) fn marks_ours(name: &str) -> bool {
    name != "QUEUE_URL" && read_by(Reader::Worker).any(|variable| variable.name == name)
}

/// Each named quarantine queue: does it exist?
pub(super) async fn read_quarantine_queues(
    clients: &Clients,
    limiters: &Limiters,
    deployment: &mut Deployment,
) {
    for index in 0..deployment.services.len() {
        let Some(wiring) = &deployment.services[index].wiring else { continue };
        let Some(url) = wiring.quarantine_queue_url.clone() else { continue };
        if deployment.queues.iter().any(|queue| queue.url == url && !queue.missing) {
            continue;
        }
        if super::queue_exists(clients, limiters, &url, deployment).await == Some(false)
            && let Some(wiring) = deployment.services[index].wiring.as_mut()
        {
            wiring.quarantine_missing = true;
        }
    }
}

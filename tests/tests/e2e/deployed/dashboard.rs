//! The deployed dashboard, as GetDashboard returns it: its body is JSON, and
//! its metrics name the deployed queues and the consumer's own scaling.

use serde_json::Value;

use super::driver::Emulator;
use super::wiring::{Checks, Deployed};

pub(crate) fn dashboard(deployed: &Deployed<'_>, checks: &mut Checks) {
    let read = &deployed.read["resources"]["Dashboard"]["read"];
    let Some(body) = read["DashboardBody"].as_str() else {
        let why = match deployed.emulator {
            // It reports CREATE_COMPLETE with the physical id "unknown" and holds no dashboard.
            Emulator::LocalStack => "LocalStack has no AWS::CloudWatch::Dashboard provider",
            Emulator::Moto => "moto's CloudWatch answers botocore's JSON protocol with a 500",
        };
        checks.unreadable(
            "dashboard",
            &format!(
                "GetDashboard answers {}: {why} (template_dashboard.rs checks the body)",
                read["error"]
            ),
        );
        return;
    };
    let body: Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("dashboard body: {e}: {body}"));
    let widgets = body["widgets"].as_array().unwrap();
    let named = |value: &str| {
        widgets.iter().any(|w| {
            let rows = w["properties"]["metrics"].as_array().into_iter().flatten();
            rows.flat_map(|row| row.as_array().into_iter().flatten())
                .any(|field| field.as_str() == Some(value))
        })
    };
    let work = deployed.work_queue_url();
    let queue = work.rsplit('/').next().unwrap_or_default();
    checks.eq("dashboard widgets", widgets.len(), 7);
    checks.eq(&format!("dashboard names the work queue {queue}"), named(queue), true);
    let quarantine = deployed.queue_attribute("QuarantineQueue", "QueueArn");
    let quarantine = quarantine.rsplit(':').next().unwrap_or_default().to_owned();
    checks.eq(
        &format!("dashboard names the quarantine queue {quarantine}"),
        named(&quarantine),
        true,
    );
    if deployed.plan.condition("IsLambdaConsumer") {
        let uuid = deployed.physical("ConsumerFunctionWorkQueue");
        checks.eq(&format!("dashboard names the mapping {uuid}"), named(&uuid), true);
        let function = deployed.physical("ConsumerFunction");
        checks.eq(&format!("dashboard names the function {function}"), named(&function), true);
    }
}

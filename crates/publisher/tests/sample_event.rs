#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test
use aws_lambda_events::eventbridge::EventBridgeEvent;

/// `events/schedule.json` must stay shaped exactly as EventBridge delivers a
/// scheduled event, which `aws_lambda_events` models.
#[test]
fn schedule_event_is_an_eventbridge_scheduled_event() {
    let text = include_str!("../../../events/schedule.json");
    let event: EventBridgeEvent<serde_json::Value> = serde_json::from_str(text).unwrap();
    assert_eq!(event.detail_type, "Scheduled Event");
    assert_eq!(event.source, "aws.events");
    assert_eq!(event.detail, serde_json::json!({}));
    assert!(event.resources.unwrap_or_default()[0].starts_with("arn:aws:events:"));
}

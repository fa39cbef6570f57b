//! Trace context carried by a message: SQS's `AWSTraceHeader` system
//! attribute (X-Ray format), passed on downstream both as it is
//! (`X-Amzn-Trace-Id`) and as a W3C `traceparent`, so one failed message
//! can be followed from its producer to the service it was delivered to.

tokio::task_local! {
    /// The trace of the Lambda invocation this task serves. Managed Instances
    /// serve several invocations in one process at once, each on its own
    /// task, so the trace cannot live in the process (`_X_AMZN_TRACE_ID`).
    static INVOCATION: Option<TraceContext>;
}

/// Runs `work` as part of the invocation traced by `trace`.
#[cfg(feature = "lambda")]
pub(crate) async fn within_invocation<F: std::future::Future>(
    trace: Option<TraceContext>,
    work: F,
) -> F::Output {
    INVOCATION.scope(trace, work).await
}

/// The X-Ray trace header of one message, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    header: String,
    trace_id: String,
    parent_id: Option<String>,
    sampled: bool,
}

impl TraceContext {
    /// Reads `Root=1-{8 hex}-{24 hex};Parent={16 hex};Sampled={0|1}` (fields
    /// in any order, others ignored). `None` when there is no valid root.
    pub(crate) fn from_aws_trace_header(header: &str) -> Option<Self> {
        let (mut root, mut parent, mut sampled) = (None, None, false);
        for field in header.trim().split(';') {
            match field.trim().split_once('=') {
                Some(("Root", value)) => root = Some(value),
                Some(("Parent", value)) => parent = Some(value),
                Some(("Sampled", value)) => sampled = value == "1",
                _ => {}
            }
        }
        let ["1", epoch, unique] = root?.split('-').collect::<Vec<_>>()[..] else {
            return None;
        };
        let trace_id = format!("{epoch}{unique}");
        if epoch.len() != 8 || !is_lower_hex(&trace_id, 32) || trace_id.bytes().all(|b| b == b'0') {
            return None;
        }
        let parent_id = parent
            .filter(|p| is_lower_hex(p, 16) && !p.bytes().all(|b| b == b'0'))
            .map(str::to_owned);
        Some(Self { header: header.trim().to_owned(), trace_id, parent_id, sampled })
    }

    /// The trace of the Lambda invocation in work on this task, if any: a
    /// processor passes it on to its own calls when the record carries none.
    pub fn of_invocation() -> Option<Self> {
        INVOCATION.try_with(Clone::clone).ok().flatten()
    }

    /// The header exactly as the producer sent it, for `X-Amzn-Trace-Id`.
    pub fn aws_trace_header(&self) -> &str {
        &self.header
    }

    /// The 32-hex-digit trace id both formats share.
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }

    /// `00-{trace id}-{parent id}-{flags}`; `None` when the header has no
    /// parent segment, which a `traceparent` cannot do without.
    pub fn traceparent(&self) -> Option<String> {
        let parent = self.parent_id.as_deref()?;
        let flags = if self.sampled { "01" } else { "00" };
        Some(format!("00-{}-{parent}-{flags}", self.trace_id))
    }
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

    #[test]
    fn x_ray_header_to_traceparent() {
        let trace = TraceContext::from_aws_trace_header(HEADER).unwrap();
        assert_eq!(trace.aws_trace_header(), HEADER);
        assert_eq!(trace.trace_id(), "5759e988bd862e3fe1be46a994272793");
        assert_eq!(
            trace.traceparent().as_deref(),
            Some("00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01")
        );
        let unsampled = TraceContext::from_aws_trace_header(
            "Sampled=0;Lineage=a:1;Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",
        )
        .unwrap();
        assert!(unsampled.traceparent().unwrap().ends_with("-00"));
        let rootless_parent =
            TraceContext::from_aws_trace_header("Root=1-5759e988-bd862e3fe1be46a994272793")
                .unwrap();
        assert_eq!(rootless_parent.traceparent(), None);
    }

    #[test]
    fn malformed_headers_are_ignored() {
        for bad in [
            "",
            "Parent=53995c3f42cd8ad8",
            "Root=2-5759e988-bd862e3fe1be46a994272793",
            "Root=1-5759e98-bd862e3fe1be46a994272793",
            "Root=1-5759E988-BD862E3FE1BE46A994272793",
            "Root=1-00000000-000000000000000000000000",
            "Root=1-5759e988-bd862e3fe1be46a99427279\u{1}",
        ] {
            assert_eq!(TraceContext::from_aws_trace_header(bad), None, "{bad:?}");
        }
        let bad_parent = TraceContext::from_aws_trace_header(
            "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=xyz",
        )
        .unwrap();
        assert_eq!(bad_parent.traceparent(), None);
    }
}

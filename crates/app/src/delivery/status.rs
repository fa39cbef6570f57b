//! How a downstream HTTP answer maps to a verdict.

use std::time::Duration;

use backpressure_batch::{ErrorCode, Verdict};

/// 2xx is done; 408, 425, 429 and 5xx may pass later; any other 4xx will
/// not, whatever the retries. Anything else (1xx, 3xx) is unexpected from
/// an API and is retried rather than dropped.
pub(crate) fn verdict_for_status(status: u16, retry_after: Option<Duration>) -> Verdict {
    match status {
        200..=299 => Verdict::Done,
        408 | 425 | 429 | 500..=599 => {
            Verdict::Retry { detail: format!("the downstream answered HTTP {status}"), retry_after }
        }
        400..=499 => Verdict::permanent(
            ErrorCode::DownstreamRejected,
            format!("the downstream answered HTTP {status}"),
        ),
        _ => Verdict::Retry {
            detail: format!("the downstream answered an unexpected HTTP {status}"),
            retry_after,
        },
    }
}

/// `Retry-After` as delta-seconds; the HTTP-date form is parsed by the caller,
/// which has a clock.
pub(crate) fn retry_after_seconds(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_code_table() {
        let after = Some(Duration::from_secs(7));
        for status in [200, 201, 202, 204, 299] {
            assert_eq!(verdict_for_status(status, None), Verdict::Done, "{status}");
        }
        for status in [408, 425, 429, 500, 502, 503, 504, 599] {
            assert!(
                matches!(verdict_for_status(status, after), Verdict::Retry { retry_after, .. } if retry_after == after),
                "{status}"
            );
        }
        for status in [400, 401, 403, 404, 409, 410, 413, 415, 422, 499] {
            assert!(
                matches!(verdict_for_status(status, after), Verdict::Permanent { code: ErrorCode::DownstreamRejected, ref detail } if detail.contains(&status.to_string())),
                "{status}"
            );
        }
        for status in [100, 301, 302, 304] {
            assert!(matches!(verdict_for_status(status, None), Verdict::Retry { .. }), "{status}");
        }
    }

    #[test]
    fn retry_after_delta_seconds() {
        assert_eq!(retry_after_seconds("120"), Some(Duration::from_secs(120)));
        assert_eq!(retry_after_seconds(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(retry_after_seconds("-1"), None);
    }
}

//! Times as the project writes them.

use std::time::SystemTime;

/// RFC 3339 in UTC with milliseconds, e.g. `2026-11-30T12:00:00.000Z`; a
/// time past what the format's four-digit year holds reads as its last instant.
pub fn rfc3339(time: SystemTime) -> String {
    checked_rfc3339(time).unwrap_or_else(|| format_timestamp(jiff::Timestamp::MAX))
}

/// [`rfc3339`], or `None` for a time outside years 0001–9999 (a forged `SentTimestamp`, say).
pub fn checked_rfc3339(time: SystemTime) -> Option<String> {
    jiff::Timestamp::try_from(time).ok().map(format_timestamp)
}

fn format_timestamp(timestamp: jiff::Timestamp) -> String {
    timestamp.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_545_082_649_183);
        assert_eq!(rfc3339(t), "2018-12-17T21:37:29.183Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
        let later = UNIX_EPOCH + Duration::from_secs(4_102_444_800); // 2100-01-01
        assert_eq!(rfc3339(later), "2100-01-01T00:00:00.000Z");
    }
}

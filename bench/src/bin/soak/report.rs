//! What one warm process did over a soak run, and its row in the table.

use std::time::Instant;

use e2e_tests::runtime_host::LambdaHost;

use crate::MAX_RSS_GROWTH;

/// What one warm process did over the run.
#[derive(Debug, Default)]
pub(crate) struct Report {
    function: &'static str,
    invocations: usize,
    rss_at_100_kib: u64,
    rss_at_end_kib: u64,
    fds_at_100: usize,
    fds_at_end: usize,
    /// Message ids (consumer) or target results (publisher) checked.
    pub(crate) counted: usize,
    pub(crate) lost: usize,
    pub(crate) misreported: usize,
    pub(crate) faults_injected: usize,
    seconds: f64,
}

impl Report {
    pub(crate) fn new(function: &'static str, invocations: usize) -> Self {
        Self { function, invocations, ..Self::default() }
    }

    pub(crate) fn rss_growth(&self) -> f64 {
        self.rss_at_end_kib as f64 / self.rss_at_100_kib.max(1) as f64 - 1.0
    }

    pub(crate) fn holds(&self) -> bool {
        self.rss_growth() <= MAX_RSS_GROWTH
            && self.fds_at_end <= self.fds_at_100
            && self.lost == 0
            && self.misreported == 0
    }

    pub(crate) fn row(&self) -> String {
        format!(
            "| {} | {} | {} | {} KiB | {} KiB | {:+.2} % | {} → {} | {} | {} | {} | {:.0} s |",
            self.function,
            self.invocations,
            self.faults_injected,
            self.rss_at_100_kib,
            self.rss_at_end_kib,
            self.rss_growth() * 100.0,
            self.fds_at_100,
            self.fds_at_end,
            self.counted,
            self.lost,
            self.misreported,
            self.seconds,
        )
    }

    pub(crate) fn sample(&mut self, host: &LambdaHost, invocation: usize) {
        if invocation == 100 {
            self.rss_at_100_kib = host.rss_kib().unwrap_or(0);
            self.fds_at_100 = host.open_fds().unwrap_or(0);
        }
    }

    pub(crate) fn finish(&mut self, host: &LambdaHost, started: Instant) {
        self.rss_at_end_kib = host.rss_kib().unwrap_or(0);
        self.fds_at_end = host.open_fds().unwrap_or(0);
        self.seconds = started.elapsed().as_secs_f64();
    }
}

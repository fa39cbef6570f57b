//! What `compare` and `recommend` print for the Lambda consumer.

use std::fmt::Write;

use super::esm::Mode;
use super::run::LambdaOutcome;
use super::search::{LambdaCandidate, LambdaRecommendation, Setting, binding_limit, describe};
use crate::recommend::Robustness;
use crate::sim::Scenario;

const HEADER: &str = "| setting                                          | SLO misses       | \
p50 wait | p99 wait |   GB-s | invocations | peak conc. | downstream peak |      cut |  left |   DLQ \
| SLO |\n|--------------------------------------------------|-----------------:|---------:|\
---------:|-------:|------------:|-----------:|----------------:|---------:|------:|------:|----:|\n";

/// The setting a scenario's Lambda consumer runs at.
pub fn setting_of(scenario: &Scenario) -> Setting {
    let esm = scenario.lambda.esm;
    Setting { mode: esm.mode, batch_size: esm.batch_size, batching_window: esm.batching_window }
}

/// One run's row.
pub fn row(setting: Setting, run: &LambdaOutcome, quantile: f64) -> String {
    let o = &run.outcome;
    let seconds = |value: Option<u64>| value.map_or_else(|| "-".to_owned(), |s| format!("{s} s"));
    let share = if o.counted == 0 { 0.0 } else { o.slo_misses() as f64 / o.counted as f64 * 100.0 };
    format!(
        "| {:<48} | {:>16} | {:>8} | {:>8} | {:>6.0} | {:>11} | {:>10} | {:>11} rps | {:>8} | \
         {:>5} | {:>5} | {:>3} |\n",
        describe(setting),
        format!("{} ({share:.1}%)", o.slo_misses()),
        seconds(o.waits.quantile(0.5)),
        seconds(o.waits.quantile(0.99)),
        run.gb_seconds(),
        run.invocations,
        run.peak_concurrency,
        run.downstream_peak_rps,
        run.cut,
        o.left,
        o.dead_lettered,
        if o.meets_slo(quantile) { "met" } else { "no" },
    )
}

fn title(scenario: &Scenario) -> String {
    let (slo, lambda) = (scenario.slo, scenario.lambda);
    let downstream = &lambda.invocation.downstream;
    format!(
        "### {} — {} messages over {} min, SLO: {:.0} % wait ≤ {} s\n\nLambda consumer: \
         ConsumerConcurrency {} × {:.2} s mean service, timeout {:.0} s, {} MB, account \
         concurrency {}, DownstreamMaxRps {}, downstream capacity {}, seed {}\n",
        scenario.trace.name,
        scenario.trace.total(),
        scenario.trace.seconds() / 60,
        slo.quantile * 100.0,
        slo.latency_seconds,
        lambda.invocation.slots,
        lambda.invocation.service.mean(),
        lambda.invocation.timeout,
        lambda.memory_mb,
        lambda.esm.account_concurrency,
        downstream.max_rps_per_instance.map_or("none".to_owned(), |r| format!("{r}")),
        downstream.capacity_rps.map_or("not set".to_owned(), |r| format!("{r} rps")),
        scenario.seed,
    )
}

/// `compare --consumer lambda` for one trace.
pub fn comparison(scenario: &Scenario, run: &LambdaOutcome) -> String {
    let mut out = title(scenario);
    out.push('\n');
    out.push_str(HEADER);
    out.push_str(&row(setting_of(scenario), run, scenario.slo.quantile));
    out
}

fn summary(c: &LambdaCandidate, r: Robustness, quantile: f64) -> String {
    format!(
        "{}: {:.0} GB-s and {:.0} invocations (mean of {} seeds), worst p{:.0} {}, met on {} of \
         {} seeds, downstream peak {} rps (worst seed)",
        describe(c.setting),
        c.gb_seconds,
        c.invocations,
        r.seeds,
        quantile * 100.0,
        c.worst_wait.map_or("-".to_owned(), |w| format!("{w} s")),
        c.seeds_met,
        r.seeds,
        c.downstream_peak_rps
    )
}

/// `recommend --consumer lambda` for one trace.
pub fn recommendation(scenario: &Scenario, found: &LambdaRecommendation, verbose: bool) -> String {
    let (slo, r) = (scenario.slo, found.robustness);
    let mut out = title(scenario);
    let grid = match scenario.lambda.esm.mode {
        Mode::Standard { .. } => "MaximumConcurrency 2–1000".to_owned(),
        Mode::Provisioned { maximum_pollers, .. } => {
            format!(
                "MinimumPollers 2–{} (MaximumPollers {maximum_pollers})",
                maximum_pollers.min(200)
            )
        }
    };
    let window = scenario.lambda.esm.batching_window;
    let _ = writeln!(
        out,
        "\n{} settings ({grid} × BatchSize 1–200 with a {window} s batching window, at least 1 s \
         above 10; --verbose lists them), each on {} seed(s); met only with p{:.0} ≤ {:.0} s on \
         every seed{}; the cheapest in GB-seconds, near-ties to the lower concurrency\n",
        found.candidates.len(),
        r.seeds,
        slo.quantile * 100.0,
        r.margin * slo.latency_seconds as f64,
        scenario
            .lambda
            .invocation
            .downstream
            .capacity_rps
            .map_or(String::new(), |c| format!(" and the downstream never above {c} requests/s")),
    );
    if verbose {
        for candidate in &found.candidates {
            let _ = writeln!(out, "  tried {}", summary(candidate, r, slo.quantile));
        }
        out.push('\n');
    }
    let shown = match (&found.best, &found.closest) {
        (Some(best), _) => {
            let _ = writeln!(out, "recommended: {}\n", summary(best, r, slo.quantile));
            best
        }
        (None, Some(closest)) => {
            let _ = writeln!(
                out,
                "no setting meets the SLO{}; closest: {}\n{}\n",
                if scenario.lambda.invocation.downstream.capacity_rps.is_some() {
                    " within the downstream's capacity"
                } else {
                    ""
                },
                summary(closest, r, slo.quantile),
                binding_limit(scenario, found)
            );
            closest
        }
        (None, None) => return out + "nothing was simulated\n",
    };
    // The line above gives means over the seeds; the row is one run, and says which.
    let _ = writeln!(out, "its run on seed {} (the picture's):", scenario.seed);
    out.push_str(HEADER);
    out.push_str(&row(shown.setting, &shown.run, slo.quantile));
    if found.best.is_some() {
        out.push_str(&deploy_lines(scenario, shown.setting));
    }
    for note in notes(scenario, shown.setting, found.best.is_some()) {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// The lines that deploy `setting`: for the function the stack creates and
/// for one of your own, or why the template cannot deploy it.
fn deploy_lines(scenario: &Scenario, setting: Setting) -> String {
    use crate::deployable::{
        LAMBDA_FIRST_DEPLOY, lambda, leaves, own_function_leaves, own_function_line,
    };
    let line = deploy_line(scenario, setting);
    let problems = lambda(scenario);
    if !problems.is_empty() {
        return format!("\n{}", crate::deployable::block(line, &problems, ""));
    }
    format!(
        "\nfor the function the stack creates:\n  {line}\n  note: {}\nfor a function of \
         your own (ConsumerFunctionArn):\n  {}\n  note: {}\n",
        leaves(LAMBDA_FIRST_DEPLOY),
        own_function_line(&line),
        own_function_leaves(&line),
    )
}

/// What a person needs to know beside the figures of `setting`'s run, and
/// beside its deploy line when one is printed (`deploying`).
pub fn notes(scenario: &Scenario, setting: Setting, deploying: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if deploying && scenario.lambda.invocation.downstream.max_rps_per_instance.is_none() {
        notes.push(
            "DownstreamMaxRps is left off the line (the run assumed none): a stack that sets it \
             keeps it"
                .to_owned(),
        );
    }
    if setting.batch_size > 10 {
        // Lambda's invocation payload limit: "6 MB" for synchronous invokes
        // (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
        notes.push(format!(
            "the mapping also cuts a batch at 6 MB of payload: BatchSize={} arrives whole only \
             while messages average under {} KB",
            setting.batch_size,
            6_000 / setting.batch_size
        ));
    }
    let deployed = 6.0 * scenario.lambda.invocation.timeout;
    if scenario.queue.visibility_timeout as f64 != deployed {
        notes.push(format!(
            "simulated with a {} s visibility timeout; the template sets the work queue's to 6 × \
             ConsumerTimeout = {deployed:.0} s",
            scenario.queue.visibility_timeout
        ));
    }
    if let Mode::Provisioned { .. } = setting.mode {
        notes.push(
            "provisioned pollers are billed as event poller units for every hour they are kept, \
             busy or not; the GB-seconds leave that charge out"
                .to_owned(),
        );
    }
    notes
}

/// The `sam deploy` line for `setting`, with every template parameter the
/// run was simulated with.
pub fn deploy_line(scenario: &Scenario, setting: Setting) -> String {
    let lambda = scenario.lambda;
    let scaling = match setting.mode {
        Mode::Standard { maximum_concurrency } => format!(
            "MaximumConcurrency={} ProvisionedMinimumPollers=0 ProvisionedMaximumPollers=0",
            maximum_concurrency.unwrap_or(0)
        ),
        Mode::Provisioned { minimum_pollers, maximum_pollers } => format!(
            "MaximumConcurrency=0 ProvisionedMinimumPollers={minimum_pollers} \
             ProvisionedMaximumPollers={maximum_pollers}"
        ),
    };
    let rps = lambda
        .invocation
        .downstream
        .max_rps_per_instance
        .map_or(String::new(), |r| format!(" DownstreamMaxRps={r}"));
    format!(
        "sam deploy --parameter-overrides ConsumerType=lambda {scaling} BatchSize={} \
         MaximumBatchingWindowInSeconds={} ConsumerConcurrency={} ConsumerTimeout={:.0} \
         ConsumerMemorySize={} DeadlineMarginMs={:.0} MaxReceiveCount={}{rps}",
        setting.batch_size,
        setting.batching_window,
        lambda.invocation.slots,
        lambda.invocation.timeout,
        lambda.memory_mb,
        lambda.invocation.deadline_margin * 1_000.0,
        scenario.queue.max_receive_count,
    )
}

/// One Lambda run as a JSON row.
pub fn json_row(setting: Setting, run: &LambdaOutcome, quantile: f64) -> serde_json::Value {
    let o = &run.outcome;
    let (mode, maximum_concurrency, pollers) = match setting.mode {
        Mode::Standard { maximum_concurrency } => ("standard", maximum_concurrency, None),
        Mode::Provisioned { minimum_pollers, maximum_pollers } => {
            ("provisioned", None, Some([minimum_pollers, maximum_pollers]))
        }
    };
    serde_json::json!({
        "consumer": "lambda",
        "mode": mode,
        "maximum_concurrency": maximum_concurrency,
        "pollers": pollers,
        "batch_size": setting.batch_size,
        "batching_window_s": setting.batching_window,
        "slo_met": o.meets_slo(quantile),
        "gb_seconds": crate::report::json::tenth(run.gb_seconds()),
        "invocations": run.invocations,
        "p50_wait_s": o.waits.quantile(0.5),
        "p99_wait_s": o.waits.quantile(0.99),
        "late": o.slo_misses(),
        "left": o.left,
        "dead_lettered": o.dead_lettered,
        "peak_concurrency": run.peak_concurrency,
        "downstream_peak_rps": run.downstream_peak_rps,
        "cut_by_deadline": run.cut,
    })
}

/// A searched setting as a JSON row, with how it did over the seeds.
pub fn json_candidate(c: &LambdaCandidate, quantile: f64) -> serde_json::Value {
    let mut row = json_row(c.setting, &c.run, quantile);
    row["over_seeds"] = serde_json::json!({
        "seeds_met": c.seeds_met,
        "gb_seconds_mean": crate::report::json::tenth(c.gb_seconds),
        "worst_quantile_wait_s": c.worst_wait,
        "downstream_peak_rps": c.downstream_peak_rps,
        "seeds_over_capacity": c.seeds_over_capacity,
    });
    row
}

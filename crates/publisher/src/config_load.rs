//! `ScalingLoad`'s variables: `TARGET_LOAD_PERCENT` turns it on and needs
//! `CONSUMER_CONCURRENCY` and `AVG_PROCESSING_SECONDS`, which only the
//! operator knows; `LOAD_DRAIN_SECONDS` and `LOAD_HOLD_SECONDS` have defaults.

use backpressure_core::config::{ConfigError, Vars};

use crate::load::LoadSettings;

/// Ranges that keep every load CloudWatch can be sent finite and in range.
const TARGET_RANGE: (f64, f64) = (1.0, 1_000.0);
const CONCURRENCY_RANGE: (u32, u32) = (1, 10_000);
const SECONDS_RANGE: (f64, f64) = (0.001, 43_200.0);

fn within<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    name: &'static str,
    (low, high): (f64, f64),
) -> Result<Option<f64>, ConfigError> {
    match positive(vars, name)? {
        Some(value) if !(low..=high).contains(&value) => Err(ConfigError::invalid(
            name,
            &value.to_string(),
            format!("expected a number from {low} to {high}"),
        )),
        value => Ok(value),
    }
}

/// The load's settings, `None` without `TARGET_LOAD_PERCENT`.
pub fn load_settings<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
) -> Result<Option<LoadSettings>, ConfigError> {
    let Some(target_percent) = within(vars, "TARGET_LOAD_PERCENT", TARGET_RANGE)? else {
        return Ok(None);
    };
    let defaults = LoadSettings::DEFAULT;
    let slots = vars.parse::<u32>("CONSUMER_CONCURRENCY", "a whole number from 1 to 10000")?;
    let slots = match slots {
        None => {
            return Err(ConfigError::Missing {
                name: "CONSUMER_CONCURRENCY",
                reason: "TARGET_LOAD_PERCENT is set, and the load counts the tasks' message slots",
            });
        }
        Some(n) if !(CONCURRENCY_RANGE.0..=CONCURRENCY_RANGE.1).contains(&n) => {
            return Err(ConfigError::invalid(
                "CONSUMER_CONCURRENCY",
                &n.to_string(),
                "expected a whole number from 1 to 10000",
            ));
        }
        Some(n) => n,
    };
    let Some(processing_seconds) = within(vars, "AVG_PROCESSING_SECONDS", SECONDS_RANGE)? else {
        return Err(ConfigError::Missing {
            name: "AVG_PROCESSING_SECONDS",
            reason: "TARGET_LOAD_PERCENT is set, and the load needs the mean seconds a message takes",
        });
    };
    let drain_seconds = within(vars, "LOAD_DRAIN_SECONDS", (1.0, SECONDS_RANGE.1))?
        .unwrap_or(defaults.drain_seconds);
    let hold_seconds = match vars.get("LOAD_HOLD_SECONDS") {
        None => defaults.hold_seconds,
        Some(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| (0.0..=SECONDS_RANGE.1).contains(v))
            .ok_or_else(|| {
                ConfigError::invalid("LOAD_HOLD_SECONDS", &text, "expected seconds from 0 to 43200")
            })?,
    };
    Ok(Some(LoadSettings {
        slots,
        processing_seconds,
        drain_seconds,
        hold_seconds,
        target_percent,
    }))
}

/// A variable's value, if set: a finite number above zero.
pub(crate) fn positive<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    name: &'static str,
) -> Result<Option<f64>, ConfigError> {
    let value = vars.parse::<f64>(name, "a positive number")?;
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => {
            Err(ConfigError::invalid(name, &v.to_string(), "expected a positive number"))
        }
        _ => Ok(value),
    }
}

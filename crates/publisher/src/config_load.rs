//! `ScalingLoad`'s variables: `TARGET_LOAD_PERCENT` turns it on and needs
//! `CONSUMER_CONCURRENCY` and `AVG_PROCESSING_SECONDS`, which only the
//! operator knows; `LOAD_DRAIN_SECONDS` and `LOAD_HOLD_SECONDS` have defaults.

use backpressure_core::config::variables::{
    AVG_PROCESSING_SECONDS, CONSUMER_CONCURRENCY, LOAD_DRAIN_SECONDS, LOAD_HOLD_SECONDS,
    TARGET_LOAD_PERCENT,
};
use backpressure_core::config::{ConfigError, Vars};

use crate::load::LoadSettings;

/// The load's settings, `None` without `TARGET_LOAD_PERCENT`; every bad
/// variable of the load is kept in `errors`.
pub fn load_settings<F: Fn(&str) -> Option<String>>(
    vars: &Vars<F>,
    errors: &mut Vec<ConfigError>,
) -> Option<LoadSettings> {
    let target_percent = ConfigError::kept(vars.decimal(&TARGET_LOAD_PERCENT), errors)??;
    let slots = vars.whole(&CONSUMER_CONCURRENCY).and_then(|slots| {
        slots.ok_or(ConfigError::Missing {
            name: CONSUMER_CONCURRENCY.name,
            reason: "TARGET_LOAD_PERCENT is set, and the load counts the tasks' message slots",
        })
    });
    let processing_seconds = vars.decimal(&AVG_PROCESSING_SECONDS).and_then(|seconds| {
        seconds.ok_or(ConfigError::Missing {
            name: AVG_PROCESSING_SECONDS.name,
            reason: "TARGET_LOAD_PERCENT is set, and the load needs the mean seconds a message takes",
        })
    });
    let slots = ConfigError::kept(slots, errors);
    let processing_seconds = ConfigError::kept(processing_seconds, errors);
    let drain_seconds = ConfigError::kept(vars.decimal_or_default(&LOAD_DRAIN_SECONDS), errors);
    let hold_seconds = ConfigError::kept(vars.decimal_or_default(&LOAD_HOLD_SECONDS), errors);
    Some(LoadSettings {
        slots: u32::try_from(slots?).ok()?,
        processing_seconds: processing_seconds?,
        drain_seconds: drain_seconds.flatten()?,
        hold_seconds: hold_seconds.flatten()?,
        target_percent,
    })
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

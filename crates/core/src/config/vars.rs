use std::str::FromStr;

use super::ConfigError;
use super::variable::{Unset, Variable};
use crate::queue::QueueRef;

/// Environment lookups. An empty value counts as unset, because CloudFormation
/// passes an optional parameter left blank as an empty string.
pub struct Vars<F> {
    lookup: F,
}

impl Vars<fn(&str) -> Option<String>> {
    /// Reads the process's environment.
    pub fn from_process_env() -> Self {
        Self { lookup: |name| std::env::var(name).ok() }
    }
}

impl<F: Fn(&str) -> Option<String>> Vars<F> {
    /// Reads through `lookup` (tests pass a map).
    pub fn new(lookup: F) -> Self {
        Self { lookup }
    }

    /// The trimmed value, `None` when unset or empty.
    pub fn get(&self, name: &str) -> Option<String> {
        (self.lookup)(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
    }

    /// The value parsed as `T`; the error names the variable, the value and what was `expected`.
    pub fn parse<T: FromStr>(
        &self,
        name: &'static str,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        self.get(name)
            .map(|value| {
                value
                    .parse()
                    .map_err(|_| ConfigError::invalid(name, &value, format!("expected {expected}")))
            })
            .transpose()
    }
}

impl<F: Fn(&str) -> Option<String>> Vars<F> {
    /// A whole number from `min` to `max`, when set.
    pub fn ranged(
        &self,
        name: &'static str,
        min: u64,
        max: u64,
    ) -> Result<Option<u64>, ConfigError> {
        let expected = format!("a whole number from {min} to {max}");
        match self.parse::<u64>(name, &expected)? {
            Some(value) if !(min..=max).contains(&value) => {
                Err(ConfigError::invalid(name, &value.to_string(), format!("expected {expected}")))
            }
            value => Ok(value),
        }
    }

    /// A required queue URL; the error names the variable, the value, or
    /// `reason` (why it is needed) when it is unset.
    pub fn queue(&self, name: &'static str, reason: &'static str) -> Result<QueueRef, ConfigError> {
        let url = self.get(name).ok_or(ConfigError::Missing { name, reason })?;
        QueueRef::parse(&url).map_err(|e| ConfigError::invalid(name, &url, e.to_string()))
    }
}

impl<F: Fn(&str) -> Option<String>> Vars<F> {
    /// `variable` as a whole number within its range, `None` when unset.
    pub fn whole(&self, variable: &Variable) -> Result<Option<u64>, ConfigError> {
        let (min, max) = variable.whole_range();
        self.ranged(variable.name, min, max)
    }

    /// `variable` as a whole number within its range, its default when unset.
    pub fn whole_or_default(&self, variable: &Variable) -> Result<u64, ConfigError> {
        Ok(self.whole(variable)?.unwrap_or(variable.whole_default()))
    }

    /// [`Vars::whole_or_default`], or the default with the error kept in
    /// `errors`: for a loader that reports every bad variable at once.
    pub fn whole_or(&self, variable: &Variable, errors: &mut Vec<ConfigError>) -> u64 {
        self.whole_or_default(variable).unwrap_or_else(|error| {
            errors.push(error);
            variable.whole_default()
        })
    }

    /// `variable` as a decimal number within its range, `None` when unset.
    pub fn decimal(&self, variable: &Variable) -> Result<Option<f64>, ConfigError> {
        let (min, max) = variable.decimal_range();
        let Some(text) = self.get(variable.name) else { return Ok(None) };
        match text.parse::<f64>() {
            Ok(value) if (min..=max).contains(&value) => Ok(Some(value)),
            _ => Err(ConfigError::invalid(
                variable.name,
                &text,
                format!("expected a number from {min} to {max}"),
            )),
        }
    }

    /// [`Vars::decimal`], or the variable's default when unset.
    pub fn decimal_or_default(&self, variable: &Variable) -> Result<Option<f64>, ConfigError> {
        let default = match variable.unset {
            Unset::Whole(value) => Some(value as f64),
            _ => None,
        };
        Ok(self.decimal(variable)?.or(default))
    }
}

impl<F> std::fmt::Debug for Vars<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Vars")
    }
}

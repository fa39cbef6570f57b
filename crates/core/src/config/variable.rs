//! What one environment variable is: its name, who reads it, what it accepts
//! and what it is when unset. The table of them is [`super::variables`].

/// A program of the project that reads its configuration from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reader {
    /// batch-consumer, and any function built on `backpressure_batch::serve`.
    Consumer,
    /// sqs-worker.
    Worker,
    /// backlog-publisher.
    Publisher,
}

/// The values a variable accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Accepts {
    /// A whole number from `min` to `max`.
    Whole {
        /// The smallest value accepted.
        min: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// A decimal number from `min` to `max`.
    Decimal {
        /// The smallest value accepted.
        min: f64,
        /// The largest value accepted.
        max: f64,
    },
    /// A value its reader checks by rules of its own, described in words.
    Described(&'static str),
}

/// What a variable is when it is unset (or empty).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Unset {
    /// The program cannot start without it.
    Required,
    /// This whole number.
    Whole(u64),
    /// This value.
    Value(&'static str),
    /// Nothing: the feature it sets is off, or the value comes from elsewhere (said in words).
    Off(&'static str),
}

/// One environment variable.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Variable {
    /// Its name.
    pub name: &'static str,
    /// The programs that read it.
    pub readers: &'static [Reader],
    /// What it is when unset.
    pub unset: Unset,
    /// What it accepts.
    pub accepts: Accepts,
    /// What it does, in a few words.
    pub meaning: &'static str,
}

impl Variable {
    /// Whether `reader` reads it.
    pub fn is_read_by(&self, reader: Reader) -> bool {
        self.readers.contains(&reader)
    }

    /// The default as a person reads it: `32`, `required`, `unset (read from the queue)`.
    pub fn default_text(&self) -> String {
        match self.unset {
            Unset::Required => "required".to_owned(),
            Unset::Whole(value) => value.to_string(),
            Unset::Value(value) => value.to_owned(),
            Unset::Off("") => "unset".to_owned(),
            Unset::Off(why) => format!("unset ({why})"),
        }
    }

    /// The values accepted as a person reads them: `1-20`, `0.001-1000000`, `a queue URL`.
    pub fn accepts_text(&self) -> String {
        match self.accepts {
            Accepts::Whole { min, max } => format!("{min}-{max}"),
            Accepts::Decimal { min, max } => format!("{min}-{max}"),
            Accepts::Described(words) => words.to_owned(),
        }
    }

    /// `(min, max)` of a whole number; the whole `u64` range for any other kind of value.
    pub const fn whole_range(&self) -> (u64, u64) {
        match self.accepts {
            Accepts::Whole { min, max } => (min, max),
            _ => (0, u64::MAX),
        }
    }

    /// `(min, max)` of a decimal number; every finite number for any other kind of value.
    pub fn decimal_range(&self) -> (f64, f64) {
        match self.accepts {
            Accepts::Decimal { min, max } => (min, max),
            Accepts::Whole { min, max } => (min as f64, max as f64),
            Accepts::Described(_) => (f64::MIN, f64::MAX),
        }
    }

    /// The default of a whole number; 0 when it has none.
    pub const fn whole_default(&self) -> u64 {
        match self.unset {
            Unset::Whole(value) => value,
            _ => 0,
        }
    }

    /// The family whose unknown members a reader may warn of: the name up to
    /// its first `_`, kept.
    pub fn family(&self) -> &'static str {
        self.name.find('_').map_or(self.name, |end| &self.name[..=end])
    }
}

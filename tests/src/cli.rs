//! The command line shared by the measurement binaries:
//! `BINARY [RUNS] [NAME=VALUE ...]`.

use std::path::PathBuf;

use crate::fixtures::BoxError;

#[derive(Debug)]
pub struct MeasureArgs {
    pub binary: PathBuf,
    pub runs: usize,
    pub env: Vec<(String, String)>,
}

impl MeasureArgs {
    pub fn from_env(usage: &str, default_runs: usize) -> Result<Self, BoxError> {
        let mut args = std::env::args().skip(1);
        let binary = PathBuf::from(args.next().ok_or_else(|| format!("usage: {usage}"))?);
        let runs = args.next().map(|r| r.parse()).transpose()?.unwrap_or(default_runs);
        let env = args
            .map(|pair| pair.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).ok_or(pair))
            .collect::<Result<_, _>>()?;
        Ok(Self { binary, runs, env })
    }

    pub fn env_pairs(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }
}

//! What the benchmark binaries share: their command line, medians, and the
//! JSON result file each writes for `bench/report.py`.
//!
//! Command line: `--option value ... [--env NAME=VALUE ...] -- PROGRAM [ARGS ...]`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper::body::Bytes;
use serde_json::{Value, json};

use e2e_tests::fixtures::BoxError;
use e2e_tests::runtime_host::{LambdaHost, Outcome};

#[derive(Debug, Default)]
pub struct BenchArgs {
    options: HashMap<String, Vec<String>>,
    pub env: Vec<(String, String)>,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl BenchArgs {
    pub fn from_env(usage: &str) -> Result<Self, BoxError> {
        Self::parse(std::env::args().skip(1), usage)
    }

    fn parse(mut words: impl Iterator<Item = String>, usage: &str) -> Result<Self, BoxError> {
        let mut parsed = Self::default();
        while let Some(word) = words.next() {
            if word == "--" {
                let program = words.next().ok_or_else(|| format!("no program; usage: {usage}"))?;
                parsed.program = PathBuf::from(program);
                parsed.args = words.collect();
                return Ok(parsed);
            }
            let name = word
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected {word:?}; usage: {usage}"))?;
            let value = words.next().ok_or_else(|| format!("--{name} needs a value"))?;
            if name == "env" {
                let (key, value) =
                    value.split_once('=').ok_or_else(|| format!("--env {value:?}: NAME=VALUE"))?;
                parsed.env.push((key.to_owned(), value.to_owned()));
            } else {
                parsed.options.entry(name.to_owned()).or_default().push(value);
            }
        }
        Ok(parsed)
    }

    /// The option's value (its last, if given more than once).
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).and_then(|values| values.last()).map(String::as_str)
    }

    /// Every value of an option that may be given more than once.
    pub fn options(&self, name: &str) -> Vec<&str> {
        self.options
            .get(name)
            .map_or_else(Vec::new, |values| values.iter().map(String::as_str).collect())
    }

    pub fn number(&self, name: &str, default: usize) -> Result<usize, BoxError> {
        self.option(name)
            .map(|value| value.parse().map_err(|e| format!("--{name} {value:?}: {e}")))
            .transpose()
            .map(|n| n.unwrap_or(default))
            .map_err(Into::into)
    }

    pub fn env_pairs(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    pub fn arg_refs(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    /// Writes `result` to `--out`, if given, and prints it.
    pub fn report(&self, result: &Value) -> Result<(), BoxError> {
        let text = serde_json::to_string_pretty(result)?;
        if let Some(path) = self.option("out") {
            write(Path::new(path), &text)?;
        }
        println!("{text}");
        Ok(())
    }
}

fn write(path: &Path, text: &str) -> Result<(), BoxError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

/// One invocation that must answer with a response and no batch item
/// failures; its duration as the host saw it.
pub async fn invoke_ok(
    host: &LambdaHost,
    event: Bytes,
    timeout: Duration,
) -> Result<Duration, BoxError> {
    let (outcome, duration) = host.invoke_timed(event, timeout).await;
    let Outcome::Response(response) = outcome else {
        return Err(format!("the invocation failed: {outcome:?}; logs: {:?}", host.logs()).into());
    };
    let failures = response["batchItemFailures"].as_array().map_or(0, Vec::len);
    if failures > 0 {
        return Err(format!("the invocation reported {failures} batch item failures").into());
    }
    Ok(duration.ok_or("the host saw no duration")?)
}

/// Starts `program` and waits for its first `GET /next`: the init time.
pub async fn start_ready(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(LambdaHost, Duration), BoxError> {
    let host = LambdaHost::start_command(program, args, env).await?;
    let ready = host.wait_until_ready(Duration::from_secs(30)).await.ok_or_else(|| {
        format!("{} never asked for an invocation: {:?}", program.display(), host.logs())
    })?;
    Ok((host, ready))
}

/// `runs` fresh processes: init time and the first invocation's duration, in ms.
pub async fn cold_starts(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    event: &Bytes,
    runs: usize,
) -> Result<Value, BoxError> {
    let (mut init, mut first) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (host, ready) = start_ready(program, args, env).await?;
        init.push(ready.as_secs_f64() * 1e3);
        let duration = invoke_ok(&host, event.clone(), Duration::from_secs(60)).await?;
        first.push(duration.as_secs_f64() * 1e3);
    }
    Ok(json!({"runs": runs, "init_ms": summary(&init), "first_invocation_ms": summary(&first)}))
}

/// Median, minimum, maximum and every sample, as JSON.
pub fn summary(samples: &[f64]) -> Value {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    json!({
        "median": median_of_sorted(&sorted),
        "min": sorted.first(),
        "max": sorted.last(),
        "samples": samples,
    })
}

/// The middle sample (the mean of the two middle ones for an even count).
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> impl Iterator<Item = String> {
        line.split_whitespace().map(str::to_owned).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn options_env_and_program_are_read() {
        let args =
            BenchArgs::parse(words("--runs 3 --env A=1 --env B=x=y -- python -m mod.fn"), "u")
                .unwrap();
        assert_eq!(args.number("runs", 10).unwrap(), 3);
        assert_eq!(args.number("starts", 10).unwrap(), 10);
        assert_eq!(args.env_pairs(), vec![("A", "1"), ("B", "x=y")]);
        assert_eq!(args.program, PathBuf::from("python"));
        assert_eq!(args.arg_refs(), vec!["-m", "mod.fn"]);
        let repeated = BenchArgs::parse(words("--p a --p b --q c"), "u").unwrap();
        assert_eq!((repeated.options("p"), repeated.option("p")), (vec!["a", "b"], Some("b")));
        assert!(repeated.options("r").is_empty());
    }

    #[test]
    fn bad_command_lines_are_refused() {
        assert!(BenchArgs::parse(words("--runs"), "u").is_err());
        assert!(BenchArgs::parse(words("runs 3"), "u").is_err());
        assert!(BenchArgs::parse(words("--env A"), "u").is_err());
        assert!(BenchArgs::parse(words("--runs x -- p"), "u").unwrap().number("runs", 1).is_err());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(summary(&[2.0, 1.0])["max"], json!(2.0));
    }
}

//! Runs any Lambda function binary on one event file, locally, the way Lambda runs it: the
//! binary is started with `AWS_LAMBDA_RUNTIME_API` pointing at a Runtime API served here
//! (its own `lambda_runtime` loop fetches the event and posts the answer), so nothing about
//! the function changes. For when cargo-lambda is not installed (`cargo lambda invoke
//! --data-file` does the same through `cargo lambda watch`).
//!
//! usage: lambda-invoke BINARY EVENT_FILE [--env-file FILE] [--timeout SECONDS] [--log FILE]
//!
//! The response goes to stdout; the function's log to stderr (or FILE). Exit 0 when the
//! function answered, 1 when it answered with an error, failed its start or gave no answer,
//! 2 for a usage error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use e2e_tests::runtime_host::{LambdaHost, Outcome};

const USAGE: &str =
    "usage: lambda-invoke BINARY EVENT_FILE [--env-file FILE] [--timeout SECONDS] [--log FILE]";

struct Args {
    binary: PathBuf,
    event: String,
    env_file: Option<String>,
    timeout: Duration,
    log: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut positional, mut env_file, mut log) = (Vec::new(), None, None);
    let mut timeout = Duration::from_secs(60);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--env-file" => env_file = Some(value("--env-file")?),
            "--log" => log = Some(value("--log")?),
            "--timeout" => {
                let text = value("--timeout")?;
                let seconds: f64 =
                    text.parse().map_err(|_| format!("--timeout {text}: not seconds"))?;
                if !(seconds.is_finite() && seconds > 0.0) {
                    return Err(format!("--timeout {text}: give seconds above 0"));
                }
                timeout = Duration::from_secs_f64(seconds);
            }
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            _ => positional.push(arg),
        }
    }
    let [binary, event] = <[String; 2]>::try_from(positional)
        .map_err(|_| "give the function's binary and one event file".to_owned())?;
    Ok(Args { binary: binary.into(), event, env_file, timeout, log })
}

/// `NAME=VALUE` lines, as `cargo lambda watch --env-file` reads them; `#` starts a comment.
fn environment(path: &str) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut pairs = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("{path}:{}: not NAME=VALUE", number + 1));
        };
        pairs.push((name.trim().to_owned(), value.to_owned()));
    }
    Ok(pairs)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("lambda-invoke: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("lambda-invoke: {message}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &Args) -> Result<ExitCode, String> {
    let text = std::fs::read_to_string(&args.event)
        .map_err(|e| format!("cannot read the event file {}: {e}", args.event))?;
    let event: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", args.event))?;
    let env = match &args.env_file {
        Some(path) => environment(path)?,
        None => Vec::new(),
    };
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    if !args.binary.is_file() {
        return Err(format!(
            "{} is not a file: give the function's built binary",
            args.binary.display()
        ));
    }
    let host = LambdaHost::start(&args.binary, &env).await.map_err(|e| format!("{e}"))?;
    let outcome = host.invoke(&event, args.timeout).await;
    let logs = host.logs().join("\n");
    match &args.log {
        Some(path) => {
            std::fs::write(path, logs + "\n").map_err(|e| format!("cannot write {path}: {e}"))?
        }
        None if logs.is_empty() => {}
        None => eprintln!("{logs}"),
    }
    Ok(match outcome {
        Outcome::Response(body) => {
            println!("{body}");
            ExitCode::SUCCESS
        }
        Outcome::Error(body) => {
            eprintln!("lambda-invoke: the function answered with an error: {body}");
            ExitCode::FAILURE
        }
        Outcome::InitError(body) => {
            eprintln!("lambda-invoke: the function failed its start: {body}");
            ExitCode::FAILURE
        }
        Outcome::Exited(status) => {
            eprintln!("lambda-invoke: the function exited ({status}) before answering");
            ExitCode::FAILURE
        }
        Outcome::TimedOut => {
            eprintln!("lambda-invoke: no answer within {:?} (--timeout)", args.timeout);
            ExitCode::FAILURE
        }
    })
}

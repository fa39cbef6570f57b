//! `doctor`: reads what hangs off the queues, checks it against the rules,
//! prints the report; its exit code sums it up.

use std::io::Write;

use backpressure_doctor::read::{Clients, Pace, Scope, read};

use crate::args::DoctorArgs;
use crate::terminal::error::CliError;
use crate::terminal::exit_status::Finish;

pub async fn doctor(args: &DoctorArgs, config: &aws_types::SdkConfig) -> Result<Finish, CliError> {
    let scope = if args.all { Scope::All } else { Scope::Queues(args.queues.clone()) };
    let all = args.all;
    let progress = move |line: &str| {
        if all {
            eprintln!("doctor: {line}");
        }
    };
    let deployment = read(&Clients::new(config), &scope, Pace::default(), &progress).await;
    let report = backpressure_doctor::check(&deployment);
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&report).unwrap_or_default())
    } else {
        report.render()
    };
    let written = std::io::stdout().lock().write_all(text.as_bytes());
    written.map_err(|e| CliError::file(std::path::Path::new("<stdout>"), e))?;
    Ok(Finish::Checked(report.exit))
}

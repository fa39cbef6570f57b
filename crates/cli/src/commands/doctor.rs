//! `doctor`: reads what hangs off the queues, checks it against the rules,
//! prints the report; its exit code sums it up.

use std::io::Write;
use std::path::Path;

use backpressure_doctor::read::{Clients, Pace, Scope, read};
use backpressure_doctor::{ParameterSet, Report, check_template};

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
    let deployment =
        read(&Clients::new(config), &scope, &args.services, Pace::default(), &progress).await;
    print(&backpressure_doctor::check(&deployment), args.json)
}

/// `doctor --template`: the parameter set checked before a deploy, no AWS call.
pub fn offline(template: &Path, parameters: Option<&Path>, json: bool) -> Result<Finish, CliError> {
    let read = |path: &Path| std::fs::read_to_string(path).map_err(|e| CliError::file(path, e));
    let text = read(template)?;
    let (label, set) = match parameters {
        Some(path) => {
            let label = path.display().to_string();
            let set = ParameterSet::parse(&label, &read(path)?)?;
            (label, set)
        }
        None => ("its defaults".to_owned(), ParameterSet::default()),
    };
    let report = check_template(&template.display().to_string(), &text, &label, &set)?;
    print(&report, json)
}

fn print(report: &Report, json: bool) -> Result<Finish, CliError> {
    let text = if json {
        format!("{}\n", serde_json::to_string(report).unwrap_or_default())
    } else {
        report.render()
    };
    let written = std::io::stdout().lock().write_all(text.as_bytes());
    written.map_err(|e| CliError::file(Path::new("<stdout>"), e))?;
    Ok(Finish::Checked(report.exit))
}

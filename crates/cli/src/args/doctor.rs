//! `doctor`'s flags.

use clap::Args;

use super::AwsArgs;

/// Which queues `doctor` starts from, and how it answers.
#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("start").required(true).args(["queues", "all", "template"]))]
pub struct DoctorArgs {
    /// A queue to start from: its name, URL or ARN; repeat the flag for several.
    #[arg(long = "queue", value_name = "NAME|URL|ARN")]
    pub queues: Vec<String>,
    /// An ECS service that reads the queues, as CLUSTER/SERVICE: its scaling and stop timeout
    /// are checked too; repeat for several (a deployed backlog-publisher's targets are found
    /// without it).
    #[arg(long = "service", value_name = "CLUSTER/SERVICE")]
    pub services: Vec<String>,
    /// Every queue of the region (progress on stderr).
    #[arg(long, conflicts_with = "queues")]
    pub all: bool,
    /// Offline, before a deploy: the CloudFormation or SAM template to check (no AWS call).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["queues", "all"])]
    pub template: Option<std::path::PathBuf>,
    /// With --template: the parameter set, a samconfig file (.toml) or a parameters JSON
    /// (.json); without it, the template's defaults.
    #[arg(long, value_name = "FILE", requires = "template")]
    pub parameters: Option<std::path::PathBuf>,
    /// One JSON document (schema in docs/doctor.md) instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub aws: AwsArgs,
}

/// `doctor`'s exit codes, as its `--help` and docs/doctor.md list them.
pub(crate) const DOCTOR_EXIT_CODES: &str = "\
Exit codes:
  0  every rule holds for what was read
  1  an error: doctor could not run (named, with the hint)
  2  a usage error: a bad flag, no region, a profile the config files do not have
  3  warnings only
  4  a rule is broken (whatever else was found)
  5  a read failed, so not everything was checked (and no rule is broken): the report
     names each call and the permission it needs";

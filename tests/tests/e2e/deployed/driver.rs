//! `scripts/deploy_stack.py` from the tests: it creates, updates, reads back and
//! deletes a stack of `template.yaml` on a CloudFormation emulator; the tests
//! decide what the read-back must say.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use e2e_tests::fixtures::binary;
use serde_json::Value;
use tokio::process::Command;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The CloudFormation a parameter set deploys on: LocalStack's for the Lambda
/// consumer (it has Lambda, EventBridge, DynamoDB, S3, CloudWatch and Logs, not
/// ECS), moto's for the ECS consumer (it has ECS, not the scaling resources).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emulator {
    LocalStack,
    Moto,
}

impl Emulator {
    pub(crate) fn for_set(set: &str) -> Self {
        if set.starts_with("ecs") { Self::Moto } else { Self::LocalStack }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::LocalStack => "LocalStack",
            Self::Moto => "moto",
        }
    }

    /// Every AWS API the deployed stack is read back through, and run against.
    pub(crate) fn endpoint(self) -> String {
        let variable = match self {
            Self::LocalStack => "E2E_LOCALSTACK_CLOUDFORMATION",
            Self::Moto => "AWS_ENDPOINT_URL_SQS",
        };
        std::env::var(variable)
            .unwrap_or_else(|_| panic!("{variable} is not set: run the tests with `make test`"))
    }

    /// Resource types its CloudFormation skips while still reporting
    /// CREATE_COMPLETE ("No Moto CloudFormation support for ..."): what they
    /// must contain stays checked by the template-vs-code tests.
    pub(crate) fn cannot_create(self) -> &'static [&'static str] {
        match self {
            Self::LocalStack => &[],
            Self::Moto => &[
                "AWS::ApplicationAutoScaling::ScalableTarget",
                "AWS::ApplicationAutoScaling::ScalingPolicy",
                "AWS::CloudWatch::Alarm",
                "AWS::SQS::QueuePolicy",
                "AWS::S3::BucketPolicy",
            ],
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One stack on one emulator, deleted by [`Stack::delete`].
pub(crate) struct Stack {
    pub(crate) name: String,
    pub(crate) emulator: Emulator,
    set: String,
    overrides: Vec<(String, String)>,
}

impl Stack {
    /// `sam deploy`'s part: the two functions' binaries uploaded as their
    /// artefacts, the set's parameters (and `overrides`) given to CreateStack,
    /// waited for to CREATE_COMPLETE.
    pub(crate) async fn create(
        name: String,
        set: &str,
        overrides: &[(&str, String)],
    ) -> Result<Self, BoxError> {
        let overrides = overrides.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        let stack = Self { name, emulator: Emulator::for_set(set), set: set.to_owned(), overrides };
        let args = stack.deploy_args("create", &[])?;
        stack.run(&args).await?;
        Ok(stack)
    }

    /// UpdateStack with every value as at create but `parameter`'s.
    pub(crate) async fn update(&self, parameter: &str, value: &str) -> Result<(), BoxError> {
        let args = self.deploy_args("update", &[(parameter.to_owned(), value.to_owned())])?;
        self.run(&args).await?;
        Ok(())
    }

    fn deploy_args(
        &self,
        command: &str,
        changed: &[(String, String)],
    ) -> Result<Vec<String>, BoxError> {
        let set_path = root().join(format!("tests/template-sets/{}.json", self.set));
        let mut args = vec![command.to_owned(), "--set".to_owned(), path(&set_path)];
        for function in ["batch-consumer", "backlog-publisher"] {
            args.push("--artefact".into());
            args.push(format!("{function}={}", path(&binary(function)?)));
        }
        for (parameter, value) in self.overrides.iter().chain(changed) {
            args.push("--param".into());
            args.push(format!("{parameter}={value}"));
        }
        if self.emulator == Emulator::Moto {
            args.push("--transform-here".into());
        }
        Ok(args)
    }

    /// Each deployed resource as its own API describes it (deploy_stack.py's JSON).
    pub(crate) async fn describe(&self) -> Result<Value, BoxError> {
        let out = self.run(&["describe".into()]).await?;
        Ok(serde_json::from_str(&out)?)
    }

    /// The event source mappings turned off: LocalStack's poller would otherwise
    /// take the messages the test hands to the deployed function's code itself.
    pub(crate) async fn disable_mappings(&self) -> Result<(), BoxError> {
        self.run(&["disable-mappings".into()]).await?;
        Ok(())
    }

    pub(crate) async fn delete(&self) -> Result<(), BoxError> {
        self.run(&["delete".into()]).await?;
        Ok(())
    }

    async fn run(&self, args: &[String]) -> Result<String, BoxError> {
        let root = root();
        let python = root.join(".venv-sam/bin/python");
        let output = Command::new(&python)
            .arg(root.join("scripts/deploy_stack.py"))
            .args(args)
            .args(["--endpoint", &self.emulator.endpoint(), "--stack", &self.name])
            .args(["--workdir", &path(&std::env::temp_dir())])
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| {
                format!("cannot run {} (make template-lint installs it): {e}", python.display())
            })?;
        if !output.status.success() {
            return Err(format!(
                "deploy_stack.py {} on {}: {}",
                args[0],
                self.emulator.name(),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        Ok(String::from_utf8(output.stdout)?)
    }
}

fn path(path: &Path) -> String {
    path.display().to_string()
}

//! `doctor --template` on what CloudFormation refuses and on files that are
//! no template: one sentence and its exit code, never a crash (a stack
//! overflow is exit 134) and never "every rule holds". Snapshots (insta), so
//! a change of wording is reviewed.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
mod common;

use common::{cli, text};

/// A folder of this test's own, removed when it ends.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir()
            .join(format!("sqs-backpressure-doctor-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, file: &str, content: &str) -> String {
        let path = self.0.join(file);
        std::fs::write(&path, content).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CONDITIONS_IN_A_CYCLE: &str = "
Parameters:
  Env: {Type: String, Default: prod}
Conditions:
  A: !And [!Condition B, !Equals [!Ref Env, prod]]
  B: !Or [!Condition A, !Equals [!Ref Env, dev]]
Resources:
  Q: {Type: AWS::SQS::Queue, Condition: A}
";

const ITS_OWN_ATTRIBUTE: &str = "
Resources:
  Self:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !GetAtt Self.Arn
";

const SUBS_NAMING_EACH_OTHER: &str = "
Resources:
  A:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub '${B}-a'
  B:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub '${A.QueueName}-b'
";

#[test]
fn what_is_no_template_or_refers_to_itself_is_one_sentence_and_exit_1() {
    let folder = Folder::new("refused");
    let cases = [
        ("empty_file", "template.yaml", ""),
        ("yaml_scalar", "template.yaml", "hello\n"),
        ("json_array", "template.json", "[1,2]\n"),
        ("markdown", "README.md", "# Orders\n\nThe orders service reads the queue.\n"),
        ("conditions_in_a_cycle", "template.yaml", CONDITIONS_IN_A_CYCLE),
        ("resource_names_its_own_attribute", "template.yaml", ITS_OWN_ATTRIBUTE),
        ("subs_name_each_other", "template.yaml", SUBS_NAMING_EACH_OTHER),
    ];
    for (name, file, content) in cases {
        let path = folder.write(file, content);
        let output = cli(&["doctor", "--template", &path]);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", text(&output));
        assert!(output.stdout.is_empty(), "{name}: {}", text(&output));
        insta::assert_snapshot!(format!("doctor_{name}"), text(&output).replace(&path, "[FILE]"));
    }
}

/// A value CloudFormation's Number refuses is a broken parameter, as any other value its
/// parameter does not take (exit 4): the report names the parameter and the value.
#[test]
fn a_max_receive_count_of_nan_is_refused_naming_it() {
    let folder = Folder::new("nan");
    let template = folder.write(
        "template.yaml",
        "
Parameters:
  MaxReceiveCount: {Type: Number, Default: 5, MinValue: 5, MaxValue: 1000}
Resources:
  Dlq: {Type: AWS::SQS::Queue}
  Orders:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Dlq.Arn
        maxReceiveCount: !Ref MaxReceiveCount
",
    );
    for (name, value) in [("nan", "NaN"), ("infinity", "Infinity")] {
        let parameters =
            folder.write(&format!("{name}.json"), &format!("{{\"MaxReceiveCount\": \"{value}\"}}"));
        let output = cli(&["doctor", "--template", &template, "--parameters", &parameters]);
        assert_eq!(output.status.code(), Some(4), "{name}: {}", text(&output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let measured = format!("MaxReceiveCount=\"{value}\": CloudFormation refuses it");
        assert!(stdout.contains(&measured), "{name}: {}", text(&output));
        insta::assert_snapshot!(
            format!("doctor_max_receive_count_{name}"),
            text(&output).replace(&template, "[TEMPLATE]").replace(&parameters, "[PARAMETERS]")
        );
    }
}

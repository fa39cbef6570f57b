//! Templates CloudFormation refuses, and files that are no template: each is
//! one sentence, never a crash (a stack overflow aborts the whole process)
//! and never "every rule holds".

use super::*;
use crate::report::EXIT_BROKEN;

fn check(template: &str) -> Result<Report, TemplateError> {
    check_template("t.yaml", template, "its defaults", &ParameterSet::default())
}

fn refusal(template: &str) -> String {
    match check(template) {
        Ok(report) => panic!("passed with exit {}:\n{}", report.exit, report.render()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn conditions_that_refer_to_each_other_are_a_cycle() {
    let template = "
Parameters:
  Env: {Type: String, Default: prod}
Conditions:
  A: !And [!Condition B, !Equals [!Ref Env, prod]]
  B: !Or [!Condition A, !Equals [!Ref Env, dev]]
Resources:
  Q:
    Type: AWS::SQS::Queue
    Condition: A
";
    assert_eq!(
        refusal(template),
        "the template's conditions refer to each other in a cycle: A → B → A"
    );
}

#[test]
fn an_if_on_conditions_in_a_cycle_is_refused_too() {
    let template = "
Conditions:
  Big: !Not [!Condition Small]
  Small: !Not [!Condition Big]
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: !If [Big, 900, 30]
";
    assert_eq!(
        refusal(template),
        "the template's conditions refer to each other in a cycle: Big → Small → Big"
    );
}

#[test]
fn a_resource_whose_name_is_its_own_attribute_refers_to_itself() {
    let template = "
Resources:
  Self:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !GetAtt Self.Arn
";
    assert_eq!(refusal(template), "the template's resource Self refers to itself: Self → Self");
}

#[test]
fn a_resource_whose_name_is_its_own_ref_refers_to_itself() {
    let template = "
Resources:
  Self:
    Type: AWS::Lambda::Function
    Properties:
      FunctionName: !Join ['-', [!Ref Self, fn]]
";
    assert_eq!(refusal(template), "the template's resource Self refers to itself: Self → Self");
}

/// CloudFormation refuses any property that reads its own resource, not only a name.
#[test]
fn any_property_reading_its_own_resource_refers_to_itself() {
    let template = "
Resources:
  Dlq:
    Type: AWS::SQS::Queue
    Properties:
      RedriveAllowPolicy:
        redrivePermission: byQueue
        sourceQueueArns: [!GetAtt Dlq.Arn]
";
    assert_eq!(refusal(template), "the template's resource Dlq refers to itself: Dlq → Dlq");
}

#[test]
fn two_subs_that_name_each_other_are_a_cycle() {
    let template = "
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
    assert_eq!(
        refusal(template),
        "the template's resources refer to each other in a cycle: A → B → A"
    );
}

#[test]
fn a_cycle_through_if_join_and_select_is_found() {
    let template = "
Parameters:
  Env: {Type: String, Default: prod}
Conditions:
  Prod: !Equals [!Ref Env, prod]
Resources:
  A:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !If [Prod, !Join ['-', [!Select [0, [!GetAtt C.Arn, x]], a]], plain]
  C:
    Type: AWS::Lambda::Function
    Properties:
      FunctionName: !Sub ['${Queue}-c', {Queue: !Ref A}]
";
    assert_eq!(
        refusal(template),
        "the template's resources refer to each other in a cycle: A → C → A"
    );
}

#[test]
fn depends_on_closes_a_cycle_as_well() {
    let template = r#"{"Resources": {
        "A": {"Type": "AWS::SQS::Queue", "DependsOn": "B"},
        "B": {"Type": "AWS::SQS::Queue", "DependsOn": ["A"]}}}"#;
    assert_eq!(
        refusal(template),
        "the template's resources refer to each other in a cycle: A → B → A"
    );
}

/// SAM makes each of a function's Events a resource of its own (an SQS event, an event
/// source mapping): the function does not depend on the queue, which may take its name.
#[test]
fn a_sam_functions_events_do_not_make_it_depend_on_its_queue() {
    let template = "
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 30
      Events:
        Orders: {Type: SQS, Properties: {Queue: !GetAtt Queue.Arn}}
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub '${Fn}-orders'
      VisibilityTimeout: 180
";
    let report = check(template).unwrap();
    assert_eq!(report.read.mappings, 1, "{}", report.render());
    let rendered = report.render();
    assert!(rendered.contains("arn:aws:sqs:REGION:ACCOUNT:STACK-Fn-orders"), "{rendered}");
}

/// A Sub's own variable and a `${!Literal}` only look like the resource's name.
#[test]
fn a_sub_variable_or_literal_named_like_the_resource_is_no_cycle() {
    let template = "
Resources:
  Self:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub ['${Self}-${!Self}', {Self: orders}]
";
    let rendered = check(template).unwrap().render();
    assert!(rendered.contains("creates 1 resource(s)"), "{rendered}");
}

#[test]
fn a_deep_chain_of_conditions_is_refused_not_overflowed() {
    let mut template = String::from("Conditions:\n");
    for i in 0..3000 {
        template.push_str(&format!("  C{i}: !Condition C{}\n", i + 1));
    }
    template.push_str("  C3000: !Equals [a, a]\n");
    template.push_str("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Condition: C0\n");
    assert_eq!(
        refusal(&template),
        "the template nests its conditions, references and functions more than 64 deep, \
         from the condition C0: doctor does not evaluate it"
    );
}

#[test]
fn a_deep_chain_of_resource_names_is_refused_not_overflowed() {
    let mut template = String::from("Resources:\n");
    for i in 0..400 {
        template.push_str(&format!(
            "  Q{i:03}:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Sub \
             '${{Q{:03}.QueueName}}-x'\n",
            i + 1
        ));
    }
    template.push_str("  Q400:\n    Type: AWS::SQS::Queue\n");
    assert_eq!(
        refusal(&template),
        "the template nests its conditions, references and functions more than 64 deep, \
         from the resource Q000: doctor does not evaluate it"
    );
}

/// Below the cap, a chain is evaluated to its end.
#[test]
fn a_chain_within_the_cap_is_evaluated() {
    let mut template = String::from("Conditions:\n");
    for i in 0..20 {
        template.push_str(&format!("  C{i}: !Condition C{}\n", i + 1));
    }
    template.push_str("  C20: !Equals [a, a]\nResources:\n");
    for i in 0..10 {
        template.push_str(&format!(
            "  Q{i}:\n    Type: AWS::SQS::Queue\n    Condition: C0\n    Properties:\n      \
             QueueName: !Sub '${{Q{}.QueueName}}-x'\n",
            i + 1
        ));
    }
    template.push_str("  Q10:\n    Type: AWS::SQS::Queue\n    Properties: {QueueName: end}\n");
    let report = check(&template).unwrap();
    let rendered = report.render();
    assert!(rendered.contains("creates 11 resource(s)"), "{rendered}");
    let planned = report.read.queues;
    assert_eq!(planned, 11);
}

#[test]
fn what_is_not_a_template_is_refused_saying_so() {
    let markdown = "# Orders\n\nThe orders service reads the queue.\nSee [the docs](docs/doctor.md) \
                    for more.\n";
    let cases = [
        ("", "it holds nothing but blank lines or comments"),
        ("# a heading\n\n", "it holds nothing but blank lines or comments"),
        ("hello\n", "it is plain text, not a mapping of sections such as Resources"),
        (markdown, "it is plain text, not a mapping of sections such as Resources"),
        ("42\n", "its top level is a single value, not a mapping of sections such as Resources"),
        ("[1, 2]\n", "its top level is a list, not a mapping of sections such as Resources"),
        ("AWSTemplateFormatVersion: '2010-09-09'\n", "it has no Resources section"),
        ("Resources: [a, b]\n", "its Resources section is not a mapping of resources"),
        (
            "Resources: {}\n",
            "its Resources section is empty, and CloudFormation requires at least one resource",
        ),
        ("Resources: {Q: {Properties: {}}}\n", "its resource Q has no Type"),
    ];
    for (text, why) in cases {
        assert_eq!(
            refusal(text),
            format!("t.yaml is not a CloudFormation template: {why}"),
            "{text:?}"
        );
    }
}

#[test]
fn a_number_parameter_of_nan_is_refused_naming_it() {
    let template = "
Parameters:
  MaxReceiveCount: {Type: Number, Default: 5, MinValue: 5, MaxValue: 1000}
Resources:
  Dlq:
    Type: AWS::SQS::Queue
  Q:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt Dlq.Arn
        maxReceiveCount: !Ref MaxReceiveCount
";
    for value in ["NaN", "nan", "inf", "-Infinity", "Infinity"] {
        let set = ParameterSet {
            stack_name: None,
            values: [("MaxReceiveCount".to_owned(), value.to_owned())].into(),
        };
        let report = check_template("t.yaml", template, "p.json", &set).unwrap();
        assert_eq!(report.exit, EXIT_BROKEN, "{value}");
        let measured: Vec<&str> = report.findings.iter().map(|f| f.measured.as_str()).collect();
        assert_eq!(
            measured,
            [format!("MaxReceiveCount={value:?}: CloudFormation refuses it (it takes a number)")],
            "{value}"
        );
    }
    let given = |value: &str| ParameterSet {
        stack_name: None,
        values: [("MaxReceiveCount".to_owned(), value.to_owned())].into(),
    };
    for value in ["5", "7.5", "1e3", "+10"] {
        let report = check_template("t.yaml", template, "p.json", &given(value)).unwrap();
        let rules: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
        assert!(!rules.contains(&"parameter-invalid"), "{value}: {}", report.render());
    }
    // A whole number is that number in the resource however it is written:
    // 5.0 and 50e-1 are 5, not a count of 0 below the rule's 5.
    for value in ["5.0", "50e-1", "1e3", "+10"] {
        let report = check_template("t.yaml", template, "p.json", &given(value)).unwrap();
        let rules: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
        let wrong = ["parameter-invalid", "max-receive-count-low"];
        assert!(!rules.iter().any(|r| wrong.contains(r)), "{value}: {}", report.render());
    }
}

/// A set under which every resource's Condition is false creates nothing:
/// no rule had anything to check, which is no pass.
#[test]
fn a_set_that_creates_nothing_is_not_a_pass() {
    let template = "
Parameters:
  Make: {Type: String, Default: 'no'}
Conditions:
  DoMake: !Equals [!Ref Make, 'yes']
Resources:
  Q: {Type: AWS::SQS::Queue, Condition: DoMake}
";
    let report = check(template).unwrap();
    assert_eq!(report.exit, crate::report::EXIT_INCOMPLETE);
    let text = report.render();
    assert!(text.contains("creates nothing: every resource's Condition is false"), "{text}");
    assert!(!text.contains("every rule holds"), "{text}");
}

/// A default of `.nan` (YAML's NaN) is named as written, not read as no default.
#[test]
fn a_default_of_nan_is_refused_naming_it() {
    let template = "
Parameters:
  MaxReceiveCount: {Type: Number, Default: .nan, MinValue: 5}
Resources:
  Q: {Type: AWS::SQS::Queue}
";
    let report = check(template).unwrap();
    let measured: Vec<&str> = report.findings.iter().map(|f| f.measured.as_str()).collect();
    assert_eq!(
        measured,
        ["MaxReceiveCount=\".nan\": CloudFormation refuses it (it takes a number)"]
    );
    assert_eq!(report.exit, EXIT_BROKEN);
}

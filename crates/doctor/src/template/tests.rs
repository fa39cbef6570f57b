//! Templates CloudFormation refuses, and files that are no template: each is
//! one sentence, never a crash (a stack overflow aborts the whole process)
//! and never "every rule holds".

use super::*;

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
fn what_is_not_a_template_is_refused_saying_so() {
    let markdown = "# Orders\n\nThe orders service reads the queue.\nSee [the docs](docs/doctor.md) \
                    for more.\n";
    let cases = [
        ("", "it is empty"),
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

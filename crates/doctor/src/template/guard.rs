//! What an evaluation is in the middle of. A condition or resource met again
//! while it is being evaluated closes a cycle the template's text may hide (a
//! name only an evaluation gives); and nesting stops at a depth a thread's
//! stack holds, however long an acyclic chain of names or conditions is.

use std::cell::{Cell, RefCell};

use super::{CycleOf, TemplateError};

/// How deep conditions, references and functions nest before doctor stops. This repository's
/// template nests 15 deep at the most; 64 levels take 1.25 MiB of stack in a debug build, whose
/// frames are the largest, so a test thread's 2 MiB holds them (the tests below).
pub(crate) const MAX_DEPTH: usize = 64;

#[derive(Default)]
pub(crate) struct Guard {
    /// The conditions and resources being evaluated, outermost first.
    open: RefCell<Vec<Element>>,
    depth: Cell<usize>,
}

struct Element {
    of: CycleOf,
    name: String,
    /// The depth it was opened at: 0 for where an evaluation starts.
    depth: usize,
    /// Whether meeting it again is a cycle: not for a resource whose properties are being
    /// evaluated, which may name what names it (a SAM function's Events).
    closes_cycles: bool,
}

/// An element being evaluated: closed when dropped.
pub(crate) struct Open<'g>(&'g Guard);

/// One level of nesting: left when dropped.
pub(crate) struct Level<'g>(&'g Guard);

impl Guard {
    /// Opens `name`, unless it is open already: then the elements from it to here are a cycle.
    pub(crate) fn open(&self, of: CycleOf, name: &str) -> Result<Open<'_>, TemplateError> {
        let mut open = self.open.borrow_mut();
        let same = |element: &Element| element.closes_cycles && element.of == of;
        if let Some(first) = open.iter().position(|element| same(element) && element.name == name) {
            let mut path: Vec<String> = open[first..]
                .iter()
                .filter(|element| same(element))
                .map(|element| element.name.clone())
                .collect();
            path.push(name.to_owned());
            return Err(TemplateError::Cycle { of, path });
        }
        let depth = self.depth.get();
        open.push(Element { of, name: name.to_owned(), depth, closes_cycles: true });
        Ok(Open(self))
    }

    /// Where an evaluation starts, for `level`'s error to name.
    pub(crate) fn start(&self, of: CycleOf, name: &str) -> Open<'_> {
        let depth = self.depth.get();
        let element = Element { of, name: name.to_owned(), depth, closes_cycles: false };
        self.open.borrow_mut().push(element);
        Open(self)
    }

    /// One level deeper, unless that passes `MAX_DEPTH`: the error names the element the
    /// evaluation started from, when it started from one.
    pub(crate) fn level(&self) -> Result<Level<'_>, TemplateError> {
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            let open = self.open.borrow();
            let start = open.first().filter(|element| element.depth == 0);
            let from = start.map(|element| format!("the {} {}", element.of.one(), element.name));
            return Err(TemplateError::TooDeep { limit: MAX_DEPTH, from });
        }
        self.depth.set(depth);
        Ok(Level(self))
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.open.borrow_mut().pop();
    }
}

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.depth.set(self.0.depth.get().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use super::*;
    use crate::template::document::parse;
    use crate::template::stack::Stack;

    /// Queues Q0 to Qn, each named after the next: Q0's name nests n + 1 deep, and each level
    /// goes through a resource's name, the longest way round.
    fn names(n: usize) -> Value {
        let mut template = String::from("Resources:\n");
        for i in 0..n {
            template.push_str(&format!(
                "  Q{i}:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Sub \
                 '${{Q{}.QueueName}}-x'\n",
                i + 1
            ));
        }
        template.push_str(&format!("  Q{n}:\n    Type: AWS::SQS::Queue\n    Properties:\n"));
        template.push_str("      QueueName: end\n");
        parse(&template).unwrap()
    }

    /// Conditions C0 to Cn, each the next: C0 nests n + 2 deep (Cn's Equals reads its values
    /// one deeper).
    fn conditions(n: usize) -> Value {
        let mut template = String::from("Conditions:\n");
        for i in 0..n {
            template.push_str(&format!("  C{i}: !Condition C{}\n", i + 1));
        }
        template.push_str(&format!("  C{n}: !Equals [a, a]\nResources:\n  Q: {{Type: T}}\n"));
        parse(&template).unwrap()
    }

    /// n Fn::If, each inside the last one's branch: n + 3 deep (the innermost one's condition
    /// reads its values three deeper).
    fn branches(n: usize) -> Value {
        let mut expression = String::from("end");
        for _ in 0..n {
            expression = format!("{{'Fn::If': [Yes, {expression}, no]}}");
        }
        let template = format!("Conditions: {{Yes: !Equals [a, a]}}\nName: {expression}\n");
        parse(&template).unwrap()
    }

    /// The cap is what a small stack holds: a debug build's frames are the largest, and a
    /// test thread has 2 MiB.
    #[test]
    fn the_deepest_evaluations_the_cap_allows_fit_in_one_and_a_half_mebibytes_of_stack() {
        let deepest = std::thread::Builder::new()
            .stack_size(1536 * 1024)
            .spawn(|| {
                let template = names(MAX_DEPTH - 1);
                let stack = Stack::new(&template, BTreeMap::new(), "STACK");
                let name = stack.physical_name("Q0").map_err(|error| error.to_string());
                let template = conditions(MAX_DEPTH - 2);
                let stack = Stack::new(&template, BTreeMap::new(), "STACK");
                let holds = stack.condition("C0").map_err(|error| error.to_string());
                let template = branches(MAX_DEPTH - 3);
                let stack = Stack::new(&template, BTreeMap::new(), "STACK");
                let taken = stack.text(&template["Name"]).map_err(|error| error.to_string());
                (name, holds, taken)
            })
            .unwrap()
            .join()
            .unwrap();
        let (name, holds, taken) = deepest;
        assert_eq!(name.unwrap(), format!("end{}", "-x".repeat(MAX_DEPTH - 1)));
        assert!(holds.unwrap());
        assert_eq!(taken.unwrap(), "end");
    }

    #[test]
    fn one_level_past_the_cap_is_refused_naming_where_it_starts() {
        let template = names(MAX_DEPTH);
        let stack = Stack::new(&template, BTreeMap::new(), "STACK");
        let refused = stack.physical_name("Q0").unwrap_err().to_string();
        assert_eq!(
            refused,
            "the template nests its conditions, references and functions more than 64 deep, \
             from the resource Q0: doctor does not evaluate it"
        );
    }

    /// A cycle the text hides from `cycles` is still one when evaluated: here the resource
    /// `Fn::GetAtt` names is itself the result of a function.
    #[test]
    fn a_cycle_met_while_evaluating_is_named_and_ends_it() {
        let template = "
Resources:
  A:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !GetAtt [!Join ['', [A]], QueueName]
";
        let set = crate::template::ParameterSet::default();
        let refused = crate::template::check_template("t.yaml", template, "its defaults", &set);
        let expected = "the template's resource A refers to itself: A → A";
        assert_eq!(refused.unwrap_err().to_string(), expected);
        let template = parse(template).unwrap();
        let stack = Stack::new(&template, BTreeMap::new(), "STACK");
        assert_eq!(stack.physical_name("A").unwrap_err().to_string(), expected);
        // Each element opened was closed on the way out: the same call finds the same cycle.
        assert_eq!(stack.physical_name("A").unwrap_err().to_string(), expected);
    }

    /// `cycles` refuses such conditions first; evaluated anyway, they end in the same sentence.
    #[test]
    fn conditions_in_a_cycle_end_their_evaluation() {
        let template = parse(
            "Conditions:\n  A: !Not [!Condition B]\n  B: !And [!Condition A, !Equals [a, a]]\n",
        )
        .unwrap();
        let stack = Stack::new(&template, BTreeMap::new(), "STACK");
        let expected = "the template's conditions refer to each other in a cycle: B → A → B";
        assert_eq!(stack.condition("B").unwrap_err().to_string(), expected);
        assert_eq!(stack.condition("B").unwrap_err().to_string(), expected);
    }
}

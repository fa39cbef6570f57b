//! The manual pages: clap_mangen's sections, with the subcommands and the
//! exit codes written as roff here, so that groff lays them out itself and
//! every page named exists.

use std::io::Write;

use clap::CommandFactory;

use crate::args::{Cli, PAGES};
use crate::terminal::exit_status::EXIT_CODES;

/// The manual page of the tool, or of one subcommand (`sqs-backpressure-stats(1)`).
pub(crate) fn render(subcommand: Option<&str>, out: &mut Vec<u8>) -> std::io::Result<()> {
    let tool = Cli::command();
    let Some(name) = subcommand else { return tool_page(tool, out) };
    let page = tool
        .get_subcommands()
        .find(|c| c.get_name() == name)
        .cloned()
        .ok_or_else(|| std::io::Error::other(format!("no subcommand {name:?}")))?;
    // The page is sqs-backpressure-NAME(1), as git's are; the synopsis is the command as typed.
    let page =
        page.name(format!("sqs-backpressure-{name}")).bin_name(format!("sqs-backpressure {name}"));
    clap_mangen::Man::new(page).render(out)
}

fn tool_page(tool: clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let subcommands: Vec<(String, String)> = tool
        .get_subcommands()
        .filter(|c| PAGES.contains(&c.get_name()))
        .map(|c| {
            (c.get_name().to_owned(), c.get_about().map(|a| a.to_string()).unwrap_or_default())
        })
        .collect();
    let man = clap_mangen::Man::new(tool);
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    writeln!(out, ".SH SUBCOMMANDS")?;
    for (name, about) in subcommands {
        writeln!(out, ".TP\n\\fBsqs\\-backpressure\\-{}\\fR(1)\n{}", escape(&name), text(&about))?;
    }
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in exit_codes() {
        writeln!(out, ".TP\n\\fB{code}\\fR\n{}", text(&meaning))?;
    }
    man.render_version_section(out)
}

/// The exit codes of `EXIT_CODES` (the text `--help` prints), unwrapped:
/// a line that starts with a number starts a code, the lines below it go on.
pub(crate) fn exit_codes() -> Vec<(u16, String)> {
    let mut codes: Vec<(u16, String)> = Vec::new();
    for line in EXIT_CODES.lines().skip(1) {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let (first, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        match first.parse::<u16>() {
            Ok(code) if indent < 4 => codes.push((code, rest.trim().to_owned())),
            _ => {
                if let Some((_, meaning)) = codes.last_mut() {
                    meaning.push(' ');
                    meaning.push_str(trimmed);
                }
            }
        }
    }
    codes
}

/// Running text for roff: escapes, and no line that starts as a request.
fn text(words: &str) -> String {
    let escaped = escape(words);
    if escaped.starts_with(['.', '\'']) { format!("\\&{escaped}") } else { escaped }
}

fn escape(words: &str) -> String {
    words.replace('\\', "\\e").replace('-', "\\-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_of_the_help_text_is_one_entry() {
        let codes = exit_codes();
        let numbers: Vec<u16> = codes.iter().map(|(code, _)| *code).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 130]);
        for (code, meaning) in &codes {
            assert!(!meaning.contains("  "), "{code}: the help text's wrapping is gone: {meaning}");
        }
        assert!(codes[5].1.ends_with("(give a longer --visibility-timeout)"), "{:?}", codes[5]);
    }

    #[test]
    fn the_tool_page_names_only_pages_that_exist() {
        let mut page = Vec::new();
        render(None, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        let named: Vec<&str> = page
            .match_indices("sqs\\-backpressure\\-")
            .filter_map(|(at, found)| page[at + found.len()..].split('\\').next())
            .collect();
        assert_eq!(named, PAGES, "{page}");
        for subcommand in PAGES {
            let mut own = Vec::new();
            render(Some(subcommand), &mut own).unwrap();
            assert!(!own.is_empty(), "{subcommand}");
        }
        assert!(
            page.contains(".SH \"EXIT STATUS\"\n.TP\n\\fB0\\fR\ndone: every message"),
            "{page}"
        );
    }
}

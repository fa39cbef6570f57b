//! Text from messages, made safe to print on an operator's terminal.

/// `text` with control characters escaped (a poison message may carry
/// terminal escape sequences), cut to `max` characters with an ellipsis.
pub(crate) fn printable(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max + 8));
    for (count, c) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_characters_and_cuts() {
        assert_eq!(printable("a\u{1b}[2Jb\n", 80), "a\\u{1b}[2Jb\\n");
        assert_eq!(printable("ééééé", 3), "ééé…");
        assert_eq!(printable("", 3), "");
    }
}

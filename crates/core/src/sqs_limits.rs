//! What SQS accepts in a message and in one batch call: the characters of a
//! body or string attribute, and ten entries of at most 1 MiB in all.

use std::borrow::Cow;

/// SQS accepts at most 1 MiB in one `SendMessageBatch` call.
pub const MAX_BATCH_BYTES: usize = 1_048_576;
/// `SendMessageBatch` accepts at most 10 entries.
pub const MAX_BATCH_ENTRIES: usize = 10;

/// Whether SQS accepts a character in a message body or string attribute:
/// #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF.
pub fn sqs_accepts(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || c >= '\u{10000}'
}

/// `text` with every character SQS refuses replaced by U+FFFD.
pub fn sqs_safe(text: &str) -> Cow<'_, str> {
    if text.chars().all(sqs_accepts) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().map(|c| if sqs_accepts(c) { c } else { '\u{FFFD}' }).collect())
    }
}

/// Groups encoded records (by their SQS size) into `SendMessageBatch` calls:
/// at most 10 entries and 1 MiB a call. Records larger than `max_message`
/// cannot be sent at all and are returned separately.
pub fn plan_batches(sizes: &[usize], max_message: usize) -> (Vec<Vec<usize>>, Vec<usize>) {
    let (mut batches, mut too_large) = (Vec::new(), Vec::new());
    let (mut current, mut current_bytes) = (Vec::new(), 0);
    for (index, &size) in sizes.iter().enumerate() {
        if size > max_message || size > MAX_BATCH_BYTES {
            too_large.push(index);
            continue;
        }
        if current.len() == MAX_BATCH_ENTRIES || current_bytes + size > MAX_BATCH_BYTES {
            batches.push(std::mem::take(&mut current));
            current_bytes = 0;
        }
        current.push(index);
        current_bytes += size;
    }
    if !current.is_empty() {
        batches.push(current);
    }
    (batches, too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_count_and_bytes() {
        let (batches, too_large) = plan_batches(&[10; 25], 262_144);
        assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), [10, 10, 5]);
        assert!(too_large.is_empty());

        let big = 400_000;
        let (batches, too_large) = plan_batches(&[big, big, big, 300_000, 5], 1_048_576);
        assert_eq!(batches, vec![vec![0, 1], vec![2, 3, 4]]);
        assert!(too_large.is_empty());

        let (batches, too_large) = plan_batches(&[100, 300_000, 100], 262_144);
        assert_eq!(batches, vec![vec![0, 2]]);
        assert_eq!(too_large, [1]);
    }

    #[test]
    fn refused_characters_become_the_replacement_character() {
        assert_eq!(sqs_safe("plain"), Cow::Borrowed("plain"));
        assert_eq!(sqs_safe("a\u{0}b\u{FFFF}"), "a\u{FFFD}b\u{FFFD}");
        assert!(sqs_accepts('\u{10FFFF}') && !sqs_accepts('\u{1F}'));
    }
}

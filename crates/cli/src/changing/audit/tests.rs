//! The audit file read back, appended to, and mended.
#![allow(clippy::unwrap_used)]

use super::*;

fn line(id: &str, queue: &str, result: Outcome) -> Line {
    Line {
        time: now(),
        operator: "arn:aws:iam::1:user/op".into(),
        action: "replay".into(),
        queue_url: queue.into(),
        queue_message_id: id.into(),
        original_message_id: format!("orig-{id}"),
        new_message_id: None,
        destination: None,
        error_code: None,
        result,
        started: now(),
        reason: None,
        object: None,
        source_key: None,
    }
}

#[tokio::test]
async fn a_reopened_file_knows_what_was_sent_from_which_queue() {
    let dir = std::env::temp_dir().join(format!("audit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&path);
    let audit = Audit::open(&path, "q").unwrap();
    audit
        .write(&[
            line("a", "q", Outcome::Replayed),
            line("b", "q", Outcome::SendFailed),
            line("c", "other", Outcome::Replayed),
        ])
        .await
        .unwrap();
    assert!(audit.was_sent("a"));
    drop(audit);
    let reopened = Audit::open(&path, "q").unwrap();
    assert!(reopened.was_sent("a"));
    assert!(!reopened.was_sent("b"), "a failed send may be sent again");
    assert!(!reopened.was_sent("c"), "another queue's message");
    reopened.write(&[line("d", "q", Outcome::Replayed)]).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 4, "appended, never rewritten");

    std::fs::write(&path, "{\"not\":\"an audit line\"}\n").unwrap();
    let error = Audit::open(&path, "q").unwrap_err().to_string();
    assert!(error.contains("line 1"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_last_line_cut_short_is_removed_and_a_whole_one_without_newline_is_kept() {
    let dir = std::env::temp_dir().join(format!("audit-torn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    let whole = |id: &str| serde_json::to_string(&line(id, "q", Outcome::Replayed)).unwrap();
    let (a, b) = (whole("a"), whole("b"));
    // A full disk cut the write of "b" half-way.
    std::fs::write(&path, format!("{a}\n{}", &b[..b.len() / 2])).unwrap();
    let audit = Audit::open(&path, "q").unwrap();
    assert!(audit.was_sent("a") && !audit.was_sent("b"));
    audit.write(&[line("c", "q", Outcome::Replayed)]).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "the torn half removed: {text}");
    assert_eq!(lines[0], a);
    let appended: Line = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(appended.queue_message_id, "c");
    drop(audit);

    std::fs::write(&path, &a).unwrap();
    let audit = Audit::open(&path, "q").unwrap();
    assert!(audit.was_sent("a"), "a whole line without its newline counts");
    audit.write(&[line("d", "q", Outcome::Replayed)]).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(&format!("{a}\n")) && text.lines().count() == 2, "{text}");

    std::fs::write(&path, format!("{}\n{a}\n", &b[..b.len() / 2])).unwrap();
    let error = Audit::open(&path, "q").unwrap_err().to_string();
    assert!(error.contains("line 1"), "a bad line before the last is an error: {error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Where a label (an idempotency key, a tenant, any field an operator selects
//! by) is found in a message: its id, a JSON pointer into its body, or one of
//! its message attributes; and the label's text exactly as the body has it.
//!
//! A number is its JSON text as written (`98765432109876543210`, `1.10`,
//! `1e3` stay as they are: parsed into a float they would collide or change),
//! a boolean `true` or `false`, a string its value. An empty string, `null`,
//! an object or an array is no label, and neither is a missing field.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

/// Where a label is found in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Selector {
    /// The SQS message id (`message-id`).
    MessageId,
    /// The envelope's own id for the message (`envelope-id`): SNS's
    /// `MessageId`, EventBridge's `id` ([`crate::envelope`]).
    EnvelopeId,
    /// A JSON pointer into the body (`/order/id`, RFC 6901).
    Pointer(String),
    /// A message attribute's string value (`attribute:NAME`).
    Attribute(String),
}

/// What [`Selector::parse`] takes, for an error that says what to give.
pub const SELECTOR_FORMS: &str =
    "give message-id, envelope-id, a JSON pointer such as /order/id, or attribute:NAME";

impl Selector {
    /// `message-id`, `envelope-id`, `/a/json/pointer` or `attribute:NAME`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "message-id" => Ok(Self::MessageId),
            "envelope-id" => Ok(Self::EnvelopeId),
            pointer if pointer.starts_with('/') => Ok(Self::Pointer(pointer.to_owned())),
            other => match other.strip_prefix("attribute:") {
                Some(name) if !name.is_empty() => Ok(Self::Attribute(name.to_owned())),
                _ => Err(SELECTOR_FORMS.to_owned()),
            },
        }
    }

    /// The label of one message: `message_id` its id, `envelope_id` its
    /// envelope's, `attribute` looks up a message attribute's string value,
    /// `body` its text (inside its envelope). `None` when the message has no
    /// such value, or an empty one.
    pub fn select<'a>(
        &self,
        message_id: Option<&str>,
        envelope_id: Option<&str>,
        attribute: impl FnOnce(&str) -> Option<&'a str>,
        body: Option<&str>,
    ) -> Option<String> {
        let label = match self {
            Self::MessageId => message_id.map(str::to_owned),
            Self::EnvelopeId => envelope_id.map(str::to_owned),
            Self::Attribute(name) => attribute(name).map(str::to_owned),
            Self::Pointer(pointer) => text_at(body?, pointer),
        };
        label.filter(|label| !label.is_empty())
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MessageId => f.write_str("message-id"),
            Self::EnvelopeId => f.write_str("envelope-id"),
            Self::Pointer(pointer) => f.write_str(pointer),
            Self::Attribute(name) => write!(f, "attribute:{name}"),
        }
    }
}

/// Whether `body` is one JSON text (RFC 8259), at any depth and with numbers
/// of any size, checked without building a tree.
pub fn is_json(body: &str) -> bool {
    serde_json::from_str::<&RawValue>(body).is_ok()
}

/// The value at `pointer` (RFC 6901) in the JSON document `body`, as its
/// text: a string's value, a number's or a boolean's JSON text as written.
/// `None` when `body` is not JSON, nothing is there, or what is there is
/// `null`, an object, an array or an empty string.
pub fn text_at(body: &str, pointer: &str) -> Option<String> {
    let mut value: &RawValue = serde_json::from_str(body).ok()?;
    if !pointer.is_empty() {
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            value = child(value, &token)?;
        }
    }
    let text = value.get();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(text).ok(),
        b'-' | b'0'..=b'9' | b't' | b'f' => Some(text.to_owned()),
        _ => None,
    }
    .filter(|text| !text.is_empty())
}

/// An object's member or an array's element, as `serde_json`'s own pointer
/// finds it (the last of repeated names; an index without leading zeros).
fn child<'a>(value: &'a RawValue, token: &str) -> Option<&'a RawValue> {
    match value.get().as_bytes().first()? {
        b'{' => {
            let mut members: BTreeMap<String, &RawValue> =
                serde_json::from_str(value.get()).ok()?;
            members.remove(token)
        }
        b'[' => {
            let index_is_canonical =
                !token.starts_with('+') && (token == "0" || !token.starts_with('0'));
            let index: usize = token.parse().ok().filter(|_| index_is_canonical)?;
            let elements: Vec<&RawValue> = serde_json::from_str(value.get()).ok()?;
            elements.get(index).copied()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_kind_of_value_gives_its_text_or_nothing() {
        let body = r#"{"s":"o-7","empty":"","big":98765432109876543210,"dec":1.10,"exp":1e3,
            "neg":-0.0,"t":true,"f":false,"nul":null,"obj":{"id":"x"},"arr":[1,"two"],
            "esc":"a\"b\u00e9","a/b":"slash","m~n":"tilde","dup":1,"dup":2}"#;
        let at = |pointer: &str| text_at(body, pointer);
        assert_eq!(at("/s").as_deref(), Some("o-7"));
        assert_eq!(at("/empty"), None, "an empty string is no label");
        assert_eq!(at("/big").as_deref(), Some("98765432109876543210"));
        assert_eq!(at("/dec").as_deref(), Some("1.10"));
        assert_eq!(at("/exp").as_deref(), Some("1e3"));
        assert_eq!(at("/neg").as_deref(), Some("-0.0"));
        assert_eq!(at("/t").as_deref(), Some("true"));
        assert_eq!(at("/f").as_deref(), Some("false"));
        for none in ["/nul", "/obj", "/arr", "/missing", "/s/deeper", "", "/arr/2", "/arr/01"] {
            assert_eq!(at(none), None, "{none}");
        }
        assert_eq!(at("/obj/id").as_deref(), Some("x"));
        assert_eq!(at("/arr/0").as_deref(), Some("1"));
        assert_eq!(at("/arr/1").as_deref(), Some("two"));
        assert_eq!(at("/esc").as_deref(), Some("a\"bé"));
        assert_eq!(at("/a~1b").as_deref(), Some("slash"));
        assert_eq!(at("/m~0n").as_deref(), Some("tilde"));
        assert_eq!(at("/dup").as_deref(), Some("2"), "the last of repeated names, as serde_json");
        assert_eq!(text_at("<html>502</html>", "/s"), None);
        assert_eq!(text_at("  42 ", "").as_deref(), Some("42"), "the whole document");
    }

    /// Any text the JSON standard allows: nesting deeper than serde_json's
    /// tree takes (128), numbers past `f64`'s range, long strings.
    #[test]
    fn a_key_is_read_from_any_valid_json() {
        let deep = format!("{}7{}", "[".repeat(200), "]".repeat(200));
        let body = format!(
            r#"{{"deep":{deep},"huge":1e400,"tiny":-1e-400,"orderId":"o-1","tenant":"t-1","long":"{}"}}"#,
            "x".repeat(100_000)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&body).is_err(), "a tree refuses it");
        assert_eq!(text_at(&body, "/orderId").as_deref(), Some("o-1"));
        assert_eq!(text_at(&body, "/tenant").as_deref(), Some("t-1"));
        assert_eq!(text_at(&body, "/huge").as_deref(), Some("1e400"), "as written");
        assert_eq!(text_at(&body, "/tiny").as_deref(), Some("-1e-400"));
        let into_deep = format!("/deep{}", "/0".repeat(200));
        assert_eq!(text_at(&body, &into_deep).as_deref(), Some("7"), "200 levels down");
        assert_eq!(text_at(&body, "/deep"), None, "an array is no label");
        let very_deep =
            format!(r#"{{"a":{}1{},"k":"v"}}"#, "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(text_at(&very_deep, "/k").as_deref(), Some("v"), "100,000 levels beside it");
        assert!(is_json(&body) && is_json(&very_deep) && is_json(" 1e400 "));
        for not_json in ["", "<html>502</html>", r#"{"a":1"#, "[1,]", "NaN", r#"{"a":1} x"#] {
            assert!(!is_json(not_json), "{not_json:?}");
            assert_eq!(text_at(not_json, "/a"), None, "{not_json:?}");
        }
    }

    #[test]
    fn two_big_numbers_stay_two_keys() {
        let one = text_at(r#"{"orderId":98765432109876543210}"#, "/orderId");
        let two = text_at(r#"{"orderId":98765432109876543211}"#, "/orderId");
        assert_ne!(one, two);
    }

    #[test]
    fn selectors_parse_print_and_select() {
        for text in ["message-id", "envelope-id", "/order/id", "attribute:tenant"] {
            assert_eq!(Selector::parse(text).unwrap().to_string(), text);
        }
        for bad in ["order.id", "attribute:", "messageid", ""] {
            assert_eq!(Selector::parse(bad), Err(SELECTOR_FORMS.to_owned()), "{bad}");
        }
        let attribute = |name: &str| (name == "tenant").then_some("");
        let select = |text: &str| {
            let body = Some(r#"{"k":""}"#);
            Selector::parse(text).unwrap().select(Some("m-1"), Some("sns-1"), attribute, body)
        };
        assert_eq!(select("message-id").as_deref(), Some("m-1"));
        assert_eq!(select("envelope-id").as_deref(), Some("sns-1"));
        assert_eq!(Selector::EnvelopeId.select(Some("m-1"), None, |_| None, None), None);
        assert_eq!(select("attribute:tenant"), None, "an empty attribute is no label");
        assert_eq!(select("/k"), None);
        assert_eq!(Selector::MessageId.select(Some(""), None, |_| None, None), None);
    }
}

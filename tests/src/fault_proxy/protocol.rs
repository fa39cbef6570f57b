//! How the proxy reads which operation a request calls, whatever its protocol,
//! and how it answers in that protocol.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

/// The operation a request calls, by whichever convention its protocol uses.
pub fn operation(target: Option<&str>, path: &str, body: &[u8]) -> String {
    if let Some(target) = target {
        return target.rsplit('.').next().unwrap_or(target).to_owned();
    }
    if let Some((_, name)) = path.rsplit_once("/operation/") {
        return name.to_owned();
    }
    String::from_utf8_lossy(body)
        .split('&')
        .find_map(|pair| pair.strip_prefix("Action="))
        .unwrap_or("unknown")
        .to_owned()
}

/// SQS's allowed characters: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
pub fn sqs_accepts(text: &str) -> bool {
    text.chars().all(|c| {
        matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            || c >= '\u{10000}'
    })
}

/// Whether an SQS send entry (or a whole `SendMessage` request) holds only
/// characters SQS accepts, in its body and its string attributes.
pub(super) fn entry_acceptable(entry: &Value) -> bool {
    let body_ok = entry.get("MessageBody").and_then(Value::as_str).is_none_or(sqs_accepts);
    let attributes_ok =
        entry.get("MessageAttributes").and_then(Value::as_object).is_none_or(|attributes| {
            attributes.iter().all(|(name, value)| {
                sqs_accepts(name)
                    && value.get("StringValue").and_then(Value::as_str).is_none_or(sqs_accepts)
            })
        });
    body_ok && attributes_ok
}

pub(super) type HttpResponse = Response<Full<Bytes>>;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    Json,
    Cbor,
    Query,
    RestXml,
}

/// The S3 operation of a request signed for S3, from its method and path
/// (`/bucket/key` path-style, as an SDK addresses an IP endpoint).
pub fn s3_operation(method: &str, path: &str, query: &str) -> String {
    let object = path.trim_start_matches('/').contains('/');
    match (method, object) {
        ("PUT", true) => "PutObject",
        ("GET", true) => "GetObject",
        ("HEAD", true) => "HeadObject",
        ("DELETE", true) => "DeleteObject",
        ("POST", false) if query.contains("delete") => "DeleteObjects",
        ("PUT", false) => "CreateBucket",
        ("GET", false) => "ListObjects",
        _ => "unknown",
    }
    .to_owned()
}

pub(super) fn error_response(
    protocol: Protocol,
    status: StatusCode,
    code: &str,
    message: &str,
) -> HttpResponse {
    let (content_type, body) = match protocol {
        Protocol::Json => (
            "application/x-amz-json-1.0",
            Bytes::from(json!({"__type": code, "message": message}).to_string()),
        ),
        Protocol::Cbor => ("application/cbor", Bytes::from(cbor_error(code, message))),
        Protocol::RestXml => (
            "application/xml",
            Bytes::from(format!(
                "<Error><Code>{code}</Code><Message>{message}</Message>\
                 <RequestId>fault-proxy</RequestId></Error>"
            )),
        ),
        Protocol::Query => (
            "text/xml",
            Bytes::from(format!(
                "<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>\
                 <Message>{message}</Message></Error><RequestId>fault-proxy</RequestId></ErrorResponse>"
            )),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
    if protocol == Protocol::Cbor {
        headers.insert("smithy-protocol", hyper::header::HeaderValue::from_static("rpc-v2-cbor"));
    }
    response
}

/// `{"__type": code, "message": message}` in CBOR (RFC 8949): a map of two
/// text strings, which is all an RPC v2 CBOR error body needs.
pub(super) fn cbor_error(code: &str, message: &str) -> Vec<u8> {
    fn text(out: &mut Vec<u8>, value: &str) {
        let len = value.len();
        if len < 24 {
            out.push(0x60 | len as u8);
        } else if len < 256 {
            out.extend([0x78, len as u8]);
        } else {
            out.push(0x79);
            out.extend((len.min(u16::MAX as usize) as u16).to_be_bytes());
        }
        out.extend(value.as_bytes());
    }
    let mut out = vec![0xA2];
    for (key, value) in [("__type", code), ("message", message)] {
        text(&mut out, key);
        text(&mut out, value);
    }
    out
}

/// A 200 answer in AWS JSON.
pub(super) fn json_response(answer: &Value) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    response
}

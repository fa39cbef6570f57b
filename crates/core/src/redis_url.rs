//! A Redis URL as logs and errors may show it.

/// `scheme://user:secret@host/?password=secret` → `scheme://user:****@host/?password=****`:
/// an AUTH token, in either place a URL can carry it, never reaches a log line or an error.
pub fn without_password(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((url, query)) => (url, Some(query)),
        None => (url, None),
    };
    let mut masked = match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:****@{host}"),
                None => format!("{scheme}://****@{host}"),
            },
            None => format!("{scheme}://{rest}"),
        },
        None => url.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if name.eq_ignore_ascii_case("password") => format!("{name}=****"),
                _ => pair.to_owned(),
            })
            .collect();
        masked = format!("{masked}?{}", pairs.join("&"));
    }
    masked
}

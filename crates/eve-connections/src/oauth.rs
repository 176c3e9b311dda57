//! The OAuth plumbing of MCP sign-ins (`connections::mcp_oauth`): the callback route,
//! how long a flow may take, query encoding, and reading a token endpoint's answer. The signed
//! `state` a flow carries is `connections::flow_state`.

/// The callback route (relative to the app's origin).
pub const CALLBACK_PATH: &str = "/eve/v1/connections/callback";
/// How long a flow may take.
pub const STATE_TTL_SECS: u64 = 600;

/// Percent-encodes everything but unreserved characters.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Decodes a query-string value (`+` is a space; a malformed escape stays as it is).
pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| s.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[i], escaped) {
            (_, Some(v)) => {
                out.push(v);
                i += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                i += 1;
            }
            (b, None) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A query parameter, decoded.
pub fn query_value(query: &str, name: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| decode(v))
}

/// The access token of a token response (`{"access_token": ...}`), or the provider's error.
pub fn parse_token_response(status: u16, body: &[u8]) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|_| format!("token endpoint answered {status} without JSON"))?;
    if let Some(token) = v
        .get("access_token")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty())
    {
        if (200..300).contains(&status) {
            return Ok(token.to_string());
        }
    }
    let why = v
        .get("error_description")
        .or_else(|| v.get("error"))
        .and_then(|e| e.as_str())
        .unwrap_or("no access_token");
    Err(format!(
        "token endpoint answered {status}: {}",
        why.chars().take(200).collect::<String>()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_responses_yield_the_access_token_or_the_providers_error() {
        assert_eq!(
            parse_token_response(200, br#"{"access_token":"tok","token_type":"bearer"}"#),
            Ok("tok".into())
        );
        assert!(parse_token_response(400, br#"{"error":"invalid_grant"}"#)
            .unwrap_err()
            .contains("invalid_grant"));
        assert!(parse_token_response(200, b"<html>").is_err());
    }

    #[test]
    fn decoding_handles_plus_percent_and_stray_percent_signs() {
        assert_eq!(decode("a+b%20c%2Fd%"), "a b c/d%");
        assert_eq!(decode("%zz"), "%zz");
    }
}

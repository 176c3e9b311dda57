//! Small pieces every account module uses: ids, token hashes, times, email checks, and the
//! mapping of a database failure to a 500 that names no SQL.

use eve_api::ApiError;
use eve_store::sql::SqlValue;

/// A new account / invitation id: 21 URL-safe random characters (as chat ids).
pub fn new_id() -> String {
    eve_store::ids::chat_id_from_random(eve_auth::crypto::random_bytes())
}

/// A new secret token (43 base64url characters) and the SHA-256 (hex) that is stored.
pub fn new_token() -> (String, String) {
    let token = eve_auth::crypto::random_token();
    let hashed = token_hash(&token);
    (token, hashed)
}

/// What is stored of a token: its SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    eve_auth::crypto::hex(&eve_auth::crypto::sha256(token.trim().as_bytes()))
}

/// ISO 8601 UTC with milliseconds.
pub fn iso(ms: i64) -> String {
    eve_store::time::format_iso_ms(ms)
}

/// The database failed: logged with its message, answered as a plain 500.
pub fn db_error(message: String) -> ApiError {
    eprintln!("accounts: database error: {message}");
    ApiError::internal("database error")
}

/// Longest email address accepted (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;

/// The address, trimmed and lower-cased, or 400: one `@` with a non-empty local part and a
/// dotted domain, no whitespace or control characters.
pub fn normalize_email(email: &str) -> Result<String, ApiError> {
    let email = email.trim().to_lowercase();
    let bad = || ApiError::bad_request("enter a valid email address");
    if email.is_empty() || email.chars().count() > MAX_EMAIL_CHARS {
        return Err(bad());
    }
    if email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad());
    }
    let (local, domain) = email.split_once('@').ok_or_else(bad)?;
    let domain_ok = domain.contains('.')
        && !domain.contains('@')
        && !domain.starts_with('.')
        && !domain.ends_with('.');
    if local.is_empty() || !domain_ok {
        return Err(bad());
    }
    Ok(email)
}

/// Column `i` of a row as text.
pub fn text(row: &[SqlValue], i: usize) -> Option<String> {
    row.get(i).cloned().and_then(SqlValue::into_string)
}

/// Column `i` of a row as an integer (0 when NULL).
pub fn int(row: &[SqlValue], i: usize) -> i64 {
    row.get(i).and_then(SqlValue::as_i64).unwrap_or_default()
}

/// Column `i` of a row as an integer, `None` when NULL.
pub fn opt_int(row: &[SqlValue], i: usize) -> Option<i64> {
    row.get(i).and_then(SqlValue::as_i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_trimmed_lowercased_and_checked() {
        assert_eq!(
            normalize_email("  Ann@Example.COM ").unwrap(),
            "ann@example.com"
        );
        for bad in [
            "",
            "ann",
            "@example.com",
            "ann@",
            "ann@localhost",
            "a b@x.io",
            "a@b@c.io",
            "a@.io",
            "a@x.",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
        assert!(normalize_email(&format!("{}@x.io", "a".repeat(260))).is_err());
    }

    #[test]
    fn a_token_is_stored_as_its_hash() {
        let (token, hashed) = new_token();
        assert_eq!(token.len(), 43);
        assert_eq!(hashed, token_hash(&token));
        assert_eq!(hashed.len(), 64);
        assert_eq!(new_id().len(), 21);
    }
}

//! Account passwords: argon2id (RustCrypto `argon2`), stored as PHC strings.
//!
//! Parameters are OWASP's minimum for argon2id (m = 19 MiB, t = 2, p = 1): one verify inside
//! the `auth` component stays well under a second (measured in `docs/performance.md`). The
//! parameters travel in each PHC string, so raising them later keeps old hashes verifiable.
//! A sign-in for an unknown email verifies against [`DUMMY_HASH`], so the answer takes the
//! same time whether the account exists (no enumeration by timing).

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use eve_api::ApiError;

/// Fewest and most characters of an account password.
pub const MIN_PASSWORD_CHARS: usize = 10;
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Memory (KiB), passes and lanes of every new hash.
pub const MEMORY_KIB: u32 = 19 * 1024;
pub const ITERATIONS: u32 = 2;
pub const LANES: u32 = 1;

/// A well-formed hash with the parameters above whose output bytes were made up, so no known
/// password matches it: what an unknown email (or an account without a password) is verified
/// against, at the cost of a real verify.
pub const DUMMY_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$ZXZlLWNoYXQtZHVtbXk$JfHlELdTL7cOHrMTszqmFNU0btvtsMLRO6W8ylWcl9c";

fn hasher() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, LANES, None)
        .expect("the fixed argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// 400 unless `password` is 10–256 characters.
pub fn check_length(password: &str) -> Result<(), ApiError> {
    let chars = password.chars().count();
    if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
        return Err(ApiError::bad_request(format!(
            "the password must be {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// The PHC string of `password` with a fresh random salt.
pub fn hash(password: &str) -> Result<String, ApiError> {
    let salt = SaltString::encode_b64(&eve_auth::crypto::random_bytes::<16>())
        .map_err(|_| ApiError::internal("cannot encode a salt"))?;
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| ApiError::internal("cannot hash the password"))
}

/// Whether `password` matches `phc`. One argon2 verify whatever is passed: `None` (no
/// account, or an account without a password) and an unreadable hash verify against
/// [`DUMMY_HASH`] and answer `false`. An over-long password is cut to the maximum before
/// hashing (it cannot match: none longer is ever stored), so its cost is bounded too.
pub fn verify(phc: Option<&str>, password: &str) -> bool {
    let parsed = phc.and_then(|p| PasswordHash::new(p).ok());
    let real = parsed.is_some();
    let target = parsed.unwrap_or_else(|| {
        PasswordHash::new(DUMMY_HASH).expect("the dummy hash is a valid PHC string")
    });
    let bounded: String = password.chars().take(MAX_PASSWORD_CHARS + 1).collect();
    let matches = hasher()
        .verify_password(bounded.as_bytes(), &target)
        .is_ok();
    real && matches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let h = hash("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify(Some(&h), "correct horse battery"));
        assert!(!verify(Some(&h), "correct horse batterY"));
        assert_ne!(h, hash("correct horse battery").unwrap(), "salted");
    }

    #[test]
    fn nothing_matches_without_a_real_hash() {
        assert!(!verify(None, "anything at all"));
        assert!(!verify(Some("not a phc string"), "anything at all"));
        assert!(!verify(Some(DUMMY_HASH), ""));
        assert!(PasswordHash::new(DUMMY_HASH).is_ok());
    }

    #[test]
    fn length_is_ten_to_256_characters() {
        assert!(check_length("123456789").is_err());
        assert!(check_length("1234567890").is_ok());
        assert!(check_length(&"密".repeat(256)).is_ok());
        assert!(check_length(&"x".repeat(257)).is_err());
    }
}

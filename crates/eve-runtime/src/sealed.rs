//! Secrets at rest: a provider's API key or an MCP server's bearer token, sealed with
//! XChaCha20-Poly1305 under the key of the secret variable `secrets_key` (32 bytes, as 64 hex
//! digits or base64). The 24-byte nonce is random per value, which that cipher's nonce size
//! makes safe without a counter.
//!
//! A sealed value is `v1.<key id>.<base64url(nonce ‖ ciphertext)>`. The key id (the first
//! 8 bytes of SHA-256 of the key, hex) says which key sealed it, so a rotation
//! (`secrets_key_previous` set to the old key, `secrets_key` to the new) can open the old
//! values and knows which are left to re-seal. The binding (the row's table, id and column)
//! is authenticated with the value, so a sealed value copied to another row does not open.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

/// A 32-byte sealing key and its id.
#[derive(Clone, PartialEq, Eq)]
pub struct SealingKey {
    key: [u8; 32],
    id: String,
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealingKey({})", self.id)
    }
}

/// The keys a deployment seals with: the current one, and the previous one during a rotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    pub current: SealingKey,
    pub previous: Option<SealingKey>,
}

impl SealingKey {
    /// Parses a variable's value: 64 hex digits, or base64 (standard or url-safe, padded or
    /// not) of 32 bytes. Anything else is an error naming what was expected.
    pub fn parse(value: &str) -> Result<SealingKey, String> {
        let v = value.trim();
        let bytes = if v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32)
                .map(|i| u8::from_str_radix(&v[2 * i..2 * i + 2], 16).map_err(|e| e.to_string()))
                .collect::<Result<Vec<u8>, String>>()?
        } else {
            STANDARD
                .decode(v)
                .or_else(|_| URL_SAFE_NO_PAD.decode(v.trim_end_matches('=')))
                .map_err(|_| NOT_A_KEY.to_string())?
        };
        let key: [u8; 32] = bytes.try_into().map_err(|_| NOT_A_KEY.to_string())?;
        Ok(SealingKey::from_bytes(key))
    }

    pub fn from_bytes(key: [u8; 32]) -> SealingKey {
        let digest = Sha256::digest(key);
        let id = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        SealingKey { key, id }
    }

    /// The key's id, as sealed values and `key_id` columns name it.
    pub fn id(&self) -> &str {
        &self.id
    }
}

const NOT_A_KEY: &str = "secrets_key: expected 32 bytes as 64 hex digits or base64";

impl Keys {
    /// The keys of `secrets_key` and `secrets_key_previous` (unset or empty: none). `Ok(None)`
    /// when no current key is set: secrets cannot be stored.
    pub fn from_vars(
        current: Option<&str>,
        previous: Option<&str>,
    ) -> Result<Option<Keys>, String> {
        fn set(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty())
        }
        let Some(current) = set(current) else {
            return Ok(None);
        };
        let previous = set(previous)
            .map(SealingKey::parse)
            .transpose()
            .map_err(|e| e.replacen("secrets_key", "secrets_key_previous", 1))?;
        Ok(Some(Keys {
            current: SealingKey::parse(current)?,
            previous,
        }))
    }

    /// Seals `secret` under the current key, bound to `binding`.
    pub fn seal(&self, binding: &str, secret: &str) -> String {
        let k = &self.current;
        let nonce: [u8; 24] = random();
        let ct = XChaCha20Poly1305::new(&k.key.into())
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: secret.as_bytes(),
                    aad: binding.as_bytes(),
                },
            )
            .expect("encryption of a small message succeeds");
        let mut raw = nonce.to_vec();
        raw.extend(ct);
        format!("v1.{}.{}", k.id, URL_SAFE_NO_PAD.encode(raw))
    }

    /// Opens what [`Keys::seal`] made under either key; `None` for anything else (an unknown
    /// key, another binding, a tampered value).
    pub fn open(&self, binding: &str, sealed: &str) -> Option<String> {
        let mut parts = sealed.splitn(3, '.');
        let (Some("v1"), Some(id), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
            return None;
        };
        let key = [Some(&self.current), self.previous.as_ref()]
            .into_iter()
            .flatten()
            .find(|k| k.id == id)?;
        let raw = URL_SAFE_NO_PAD.decode(body).ok()?;
        if raw.len() < 24 + 16 {
            return None;
        }
        let (nonce, ct) = raw.split_at(24);
        let nonce = XNonce::try_from(nonce).ok()?;
        let plain = XChaCha20Poly1305::new(&key.key.into())
            .decrypt(
                &nonce,
                Payload {
                    msg: ct,
                    aad: binding.as_bytes(),
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }

    /// Whether `sealed` was sealed under the current key (else a rotation must re-seal it).
    pub fn is_current(&self, sealed: &str) -> bool {
        sealed
            .strip_prefix("v1.")
            .and_then(|rest| rest.split('.').next())
            .is_some_and(|id| id == self.current.id)
    }
}

/// The binding of a secret column: its table, row id and column.
pub fn binding(table: &str, id: &str, column: &str) -> String {
    format!("{table}:{id}:{column}")
}

fn random<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).expect("the platform provides randomness");
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(current: u8, previous: Option<u8>) -> Keys {
        Keys {
            current: SealingKey::from_bytes([current; 32]),
            previous: previous.map(|p| SealingKey::from_bytes([p; 32])),
        }
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_binding() {
        let k = keys(1, None);
        let sealed = k.seal("provider:p1:api_key", "sk-live-123");
        assert!(!sealed.contains("sk-live"), "{sealed}");
        assert_eq!(
            k.open("provider:p1:api_key", &sealed).as_deref(),
            Some("sk-live-123")
        );
        assert_eq!(k.open("provider:p2:api_key", &sealed), None);
        assert_eq!(keys(2, None).open("provider:p1:api_key", &sealed), None);
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(k.open("provider:p1:api_key", &tampered), None);
        assert_ne!(
            sealed,
            k.seal("provider:p1:api_key", "sk-live-123"),
            "fresh nonce"
        );
    }

    #[test]
    fn during_a_rotation_old_values_open_and_are_not_current() {
        let old = keys(1, None).seal("b", "secret");
        let rotated = keys(2, Some(1));
        assert_eq!(rotated.open("b", &old).as_deref(), Some("secret"));
        assert!(!rotated.is_current(&old));
        assert!(rotated.is_current(&rotated.seal("b", "secret")));
        assert_eq!(keys(2, None).open("b", &old), None);
    }

    #[test]
    fn keys_parse_from_hex_or_base64_and_name_the_variable() {
        let hex = "00".repeat(31) + "01";
        let b64 = STANDARD.encode([7u8; 32]);
        assert!(SealingKey::parse(&hex).is_ok());
        assert_eq!(
            SealingKey::parse(&b64).unwrap(),
            SealingKey::from_bytes([7; 32])
        );
        assert!(SealingKey::parse("too short")
            .unwrap_err()
            .starts_with("secrets_key"));
        assert_eq!(Keys::from_vars(None, Some(&hex)).unwrap(), None);
        assert_eq!(Keys::from_vars(Some(" "), None).unwrap(), None);
        let e = Keys::from_vars(Some(&hex), Some("bad")).unwrap_err();
        assert!(e.starts_with("secrets_key_previous"), "{e}");
    }
}

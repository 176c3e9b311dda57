//! Chat ids: 21 characters from the URL-safe alphabet `A-Za-z0-9_-` (126 random bits, the
//! nanoid shape), made from random bytes the caller supplies. Ids that arrive in a URL or a
//! body are checked against [`is_valid_chat_id`] before they reach SQL; an id that fails is
//! answered exactly like an unknown one (404), so the check leaks nothing.

/// Length of a generated chat id.
pub const CHAT_ID_LEN: usize = 21;

/// Longest id accepted on input (also allows a UUID chosen by a client).
pub const MAX_CHAT_ID_LEN: usize = 64;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/// A chat id from 21 random bytes (each byte picks one of 64 symbols: no modulo bias).
pub fn chat_id_from_random(bytes: [u8; CHAT_ID_LEN]) -> String {
    bytes
        .iter()
        .map(|b| ALPHABET[usize::from(b & 63)] as char)
        .collect()
}

/// The chat id for a client-chosen id (`POST /api/chats {id}`): SHA-256 of the principal and
/// the client's id, as a generated id. The client's id is an idempotency key of its principal:
/// another principal choosing the same one gets another chat, so a taken id reveals nothing.
pub fn chat_id_for_client(principal: &str, client_id: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(b"eve-chat client chat id\0");
    hash.update(principal.as_bytes());
    hash.update(b"\0");
    hash.update(client_id.as_bytes());
    let digest = hash.finalize();
    let mut bytes = [0u8; CHAT_ID_LEN];
    bytes.copy_from_slice(&digest[..CHAT_ID_LEN]);
    chat_id_from_random(bytes)
}

/// 1 ..= 64 characters, each ASCII letter, digit, `_` or `-`.
pub fn is_valid_chat_id(id: &str) -> bool {
    (1..=MAX_CHAT_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_are_scoped_to_their_principal() {
        let a = chat_id_for_client("alice", "my-chat");
        assert_eq!(a, chat_id_for_client("alice", "my-chat"));
        assert_ne!(a, chat_id_for_client("bob", "my-chat"));
        assert_ne!(a, chat_id_for_client("alice", "my-chat2"));
        // No ambiguity at the separator.
        assert_ne!(chat_id_for_client("a", "bc"), chat_id_for_client("ab", "c"));
        assert!(is_valid_chat_id(&a) && a.len() == CHAT_ID_LEN);
    }

    #[test]
    fn generated_ids_are_21_url_safe_characters() {
        let id = chat_id_from_random([
            0, 1, 2, 63, 64, 255, 26, 52, 62, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
        ]);
        assert_eq!(id.len(), CHAT_ID_LEN);
        assert!(id.starts_with("ABC-A-a0_"));
        assert!(is_valid_chat_id(&id));
    }

    #[test]
    fn different_bytes_give_different_ids() {
        assert_ne!(chat_id_from_random([1; 21]), chat_id_from_random([2; 21]));
    }

    #[test]
    fn ids_with_other_characters_or_lengths_are_invalid() {
        assert!(is_valid_chat_id("550e8400-e29b-41d4-a716-446655440000"));
        for bad in [
            "",
            "a b",
            "a/b",
            "a::b",
            "a%20",
            "é",
            "a.b",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_chat_id(bad), "{bad:?}");
        }
    }
}

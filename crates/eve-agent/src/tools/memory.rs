//! Long-term memory (seed 000): one bounded document per principal that the model maintains
//! with `remember` / `forget`, holding stable facts and preferences — never passwords, tokens,
//! payment data, keys or one-time codes. That rule is enforced here by a check on every fact,
//! not only asked for in the prompt.

/// The document's size bound (characters).
pub const MAX_MEMORY_CHARS: usize = 4000;
/// One fact's bound.
pub const MAX_FACT_CHARS: usize = 300;

/// Why a fact was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryError {
    Empty,
    TooLong,
    Full,
    /// Looks like a secret (the kind is named, the value never echoed).
    Secret(&'static str),
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryError::Empty => write!(f, "nothing to remember"),
            MemoryError::TooLong => write!(f, "a fact may have at most {MAX_FACT_CHARS} characters"),
            MemoryError::Full => write!(f, "memory is full ({MAX_MEMORY_CHARS} characters); forget something first"),
            MemoryError::Secret(kind) => write!(
                f,
                "refused: this looks like {kind}; memory never stores passwords, tokens, payment data, keys or one-time codes"
            ),
        }
    }
}

/// Refuses facts that look like secrets.
pub fn check_fact(fact: &str) -> Result<(), MemoryError> {
    let lower = fact.to_lowercase();
    const WORDS: &[(&str, &str)] = &[
        ("password", "a password"),
        ("passwort", "a password"),
        ("passcode", "a password"),
        ("passphrase", "a password"),
        ("pwd", "a password"),
        ("api key", "a key"),
        ("api-key", "a key"),
        ("apikey", "a key"),
        ("secret", "a secret"),
        ("private key", "a key"),
        ("access token", "a token"),
        ("bearer ", "a token"),
        ("token", "a token"),
        ("one-time code", "a one-time code"),
        ("one time code", "a one-time code"),
        ("verification code", "a one-time code"),
        ("otp", "a one-time code"),
        ("2fa", "a one-time code"),
        ("cvv", "payment data"),
        ("cvc", "payment data"),
        ("credit card", "payment data"),
        ("card number", "payment data"),
        ("iban", "payment data"),
        ("pin ", "a password"),
    ];
    for (word, kind) in WORDS {
        if contains_word(&lower, word) {
            return Err(MemoryError::Secret(kind));
        }
    }
    if fact.contains("-----BEGIN") {
        return Err(MemoryError::Secret("a key"));
    }
    for token in
        fact.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '"' || c == '\'')
    {
        if looks_like_credential(token) {
            return Err(MemoryError::Secret("a token"));
        }
    }
    if has_card_number(fact) {
        return Err(MemoryError::Secret("payment data"));
    }
    Ok(())
}

fn contains_word(haystack: &str, word: &str) -> bool {
    let w = word.trim_end();
    haystack.match_indices(w).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + w.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        boundary(before) && (boundary(after) || w.ends_with(' '))
    })
}

/// API-key-like strings: known prefixes, JWTs, long high-entropy mixes of letters and digits.
fn looks_like_credential(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_');
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_",
        "pk_",
        "rk_",
        "ghp_",
        "gho_",
        "github_pat_",
        "xox",
        "AKIA",
        "AIza",
        "glpat-",
        "eyJ",
    ];
    if t.len() >= 16 && PREFIXES.iter().any(|p| t.starts_with(p)) {
        return true;
    }
    let digits = t.chars().filter(char::is_ascii_digit).count();
    let letters = t.chars().filter(char::is_ascii_alphabetic).count();
    t.len() >= 24
        && digits >= 4
        && letters >= 4
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// 13–19 digits (spaces or dashes allowed between) passing the Luhn check.
fn has_card_number(text: &str) -> bool {
    let mut digits: Vec<u32> = Vec::new();
    let flush = |digits: &mut Vec<u32>| -> bool {
        let found = (13..=19).contains(&digits.len()) && luhn(digits);
        digits.clear();
        found
    };
    for c in text.chars() {
        if let Some(d) = c.to_digit(10) {
            digits.push(d);
        } else if c == ' ' || c == '-' {
            continue;
        } else if flush(&mut digits) {
            return true;
        }
    }
    flush(&mut digits)
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                *d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The document with `fact` added as a line (deduplicated), or why not.
pub fn remember(document: &str, fact: &str) -> Result<String, MemoryError> {
    let fact = fact.split_whitespace().collect::<Vec<_>>().join(" ");
    if fact.is_empty() {
        return Err(MemoryError::Empty);
    }
    if fact.chars().count() > MAX_FACT_CHARS {
        return Err(MemoryError::TooLong);
    }
    check_fact(&fact)?;
    let line = format!("- {fact}");
    if document.lines().any(|l| l.trim() == line) {
        return Ok(document.to_string());
    }
    let next = if document.trim().is_empty() {
        line
    } else {
        format!("{}\n{line}", document.trim_end())
    };
    if next.chars().count() > MAX_MEMORY_CHARS {
        return Err(MemoryError::Full);
    }
    Ok(next)
}

/// The document without lines containing `text` (case-insensitive); and how many went.
pub fn forget(document: &str, text: &str) -> (String, usize) {
    let needle = text.trim().to_lowercase();
    if needle.is_empty() {
        return (document.to_string(), 0);
    }
    let mut removed = 0;
    let kept: Vec<&str> = document
        .lines()
        .filter(|l| {
            let hit = l.to_lowercase().contains(&needle);
            removed += usize::from(hit);
            !hit
        })
        .collect();
    (kept.join("\n"), removed)
}

/// The facts of a document.
pub fn facts(document: &str) -> Vec<String> {
    document
        .lines()
        .map(|l| l.trim().trim_start_matches("- ").to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_never_stores_passwords_tokens_payment_data_keys_or_one_time_codes() {
        for secret in [
            "my password is hunter2",
            "The wifi passcode: 1234",
            "my API key is abc",
            "token ghp_abcdefghijklmnopqrstuvwxyz123456",
            "use sk-proj-abcdefghijklmnop1234",
            "card 4111 1111 1111 1111",
            "4242-4242-4242-4242 expires 12/30",
            "my one-time code is 492011",
            "OTP 123456",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
            "CVV 123",
        ] {
            assert!(
                matches!(check_fact(secret), Err(MemoryError::Secret(_))),
                "accepted {secret:?}"
            );
        }
    }

    #[test]
    fn ordinary_facts_and_preferences_are_remembered() {
        for fact in [
            "prefers metric units",
            "lives in Paris",
            "has two cats named Tom and Pip",
            "birthday is 14 March",
            "works at Acme on the tokenizer team",
            "phone model is Pixel 8",
        ] {
            assert_eq!(check_fact(fact), Ok(()), "{fact}");
        }
    }

    #[test]
    fn remember_appends_deduplicated_lines_within_the_bound() {
        let d = remember("", "likes tea").unwrap();
        let d = remember(&d, "likes  tea").unwrap();
        let d = remember(&d, "lives in Oslo").unwrap();
        assert_eq!(d, "- likes tea\n- lives in Oslo");
        assert_eq!(facts(&d), vec!["likes tea", "lives in Oslo"]);
        let big = "x".repeat(MAX_MEMORY_CHARS - 5);
        assert_eq!(remember(&big, "one more fact"), Err(MemoryError::Full));
        assert_eq!(remember("", "  "), Err(MemoryError::Empty));
    }

    #[test]
    fn forget_removes_matching_lines() {
        let (d, n) = forget("- likes tea\n- lives in Oslo", "OSLO");
        assert_eq!((d.as_str(), n), ("- likes tea", 1));
    }
}

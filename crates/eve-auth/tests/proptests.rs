//! Property tests of the signed-value and session-cookie codecs, the `Cookie` header reader and
//! the same-origin parser: whatever a client sends, they answer without panicking; what they
//! seal they open again; and no change of a single bit of a signed value still verifies.

use eve_api::auth::{AuthMode, Principal};
use eve_auth::cookie::{
    cookie_values, set_cookie, CookieError, SessionClaims, SessionCodec, SignedValueCodec,
    MAX_SIGNED_VALUE_CHARS, SESSION_COOKIE_NAME, SESSION_LIFETIME_SECS,
};
use eve_auth::origin::{check_same_origin, safe_return_path, Origin, RequestFacts};
use proptest::prelude::*;

const SECRET: &str = "0123456789abcdef0123456789abcdef";
const PREVIOUS: &str = "fedcba9876543210fedcba9876543210";
const NOW: u64 = 1_750_000_000;

fn session_codec() -> SessionCodec {
    SessionCodec::new(
        AuthMode::Password,
        SECRET,
        Some(PREVIOUS),
        "password:binding",
    )
}

fn signed_codec() -> SignedValueCodec {
    SignedValueCodec::new(SECRET, Some(PREVIOUS), "session", "password:binding")
}

fn mode() -> impl Strategy<Value = AuthMode> {
    prop_oneof![
        Just(AuthMode::LocalDev),
        Just(AuthMode::Password),
        Just(AuthMode::Oidc),
        Just(AuthMode::Unconfigured),
    ]
}

fn principal() -> impl Strategy<Value = Principal> {
    (
        "\\PC{1,64}",
        proptest::option::of("\\PC{0,40}"),
        proptest::option::of("[a-z0-9.+-]{1,20}@[a-z0-9.-]{1,20}"),
    )
        .prop_map(|(id, name, email)| Principal {
            id,
            mode: AuthMode::Password,
            name,
            email,
        })
}

/// Strings that look like signed values (the prefix, base64url-ish parts, dots) as well as
/// arbitrary ones, so the generator reaches the decoding code and not only the first check.
fn cookie_like() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "v1\\.[A-Za-z0-9_=+/-]{0,120}\\.[A-Za-z0-9_=+/-]{0,60}",
        "v1\\.[A-Za-z0-9_.-]{0,200}",
        "(v1)?[.A-Za-z0-9_\\-\\PC]{0,80}",
    ]
}

/// `cases` runs per property; failures are reported, not saved to files next to the source.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn opening_any_string_never_panics(value in cookie_like()) {
        let _ = signed_codec().open(&value);
        let _ = session_codec().verify(&value, NOW);
    }

    #[test]
    fn a_value_over_the_size_limit_is_malformed_before_any_decoding(extra in 1usize..64) {
        let value = format!("v1.{}", "A".repeat(MAX_SIGNED_VALUE_CHARS + extra));
        prop_assert_eq!(signed_codec().open(&value), Err(CookieError::Malformed));
    }

    #[test]
    fn seal_then_open_returns_the_same_payload(payload in proptest::collection::vec(any::<u8>(), 1..512)) {
        let codec = signed_codec();
        let sealed = codec.seal(&payload);
        prop_assert_eq!(codec.open(&sealed), Ok((payload, false)));
    }

    #[test]
    fn a_value_sealed_under_the_previous_secret_opens_and_says_so(payload in proptest::collection::vec(any::<u8>(), 1..128)) {
        let old = SignedValueCodec::new(PREVIOUS, None, "session", "password:binding");
        prop_assert_eq!(signed_codec().open(&old.seal(&payload)), Ok((payload, true)));
    }

    #[test]
    fn an_issued_session_cookie_verifies_to_the_same_principal(p in principal(), age in 0u64..SESSION_LIFETIME_SECS) {
        let codec = session_codec();
        let (value, claims) = codec.issue(&p, NOW);
        let verified = codec.verify(&value, NOW + age).expect("a fresh cookie verifies");
        prop_assert_eq!(verified.claims.principal(), p);
        prop_assert_eq!(verified.claims, claims);
    }

    #[test]
    fn changing_any_single_bit_of_a_session_cookie_is_rejected(
        p in principal(),
        position in any::<prop::sample::Index>(),
        bit in 0u8..7,
    ) {
        let codec = session_codec();
        let (value, _) = codec.issue(&p, NOW);
        let mut bytes = value.clone().into_bytes();
        let at = position.index(bytes.len());
        // Bits 0..7 of an ASCII byte: the result stays ASCII (so still a `&str`), and differs.
        bytes[at] ^= 1 << bit;
        let tampered = String::from_utf8(bytes).expect("still ASCII");
        prop_assert_ne!(&tampered, &value);
        prop_assert!(
            codec.verify(&tampered, NOW).is_err(),
            "bit {} of byte {} flipped, and {:?} still verified", bit, at, tampered
        );
    }

    #[test]
    fn changing_any_single_bit_of_a_signed_value_is_rejected(
        payload in proptest::collection::vec(any::<u8>(), 1..256),
        position in any::<prop::sample::Index>(),
        bit in 0u8..7,
    ) {
        let codec = signed_codec();
        let sealed = codec.seal(&payload);
        let mut bytes = sealed.into_bytes();
        let at = position.index(bytes.len());
        bytes[at] ^= 1 << bit;
        let tampered = String::from_utf8(bytes).expect("still ASCII");
        prop_assert!(codec.open(&tampered).is_err(), "{:?} still opened", tampered);
    }

    #[test]
    fn a_truncated_or_extended_cookie_is_rejected(p in principal(), cut in any::<prop::sample::Index>(), tail in "[A-Za-z0-9_-]{1,8}") {
        let codec = session_codec();
        let (value, _) = codec.issue(&p, NOW);
        let cut = cut.index(value.len());
        prop_assert!(codec.verify(&value[..cut], NOW).is_err());
        let extended = format!("{value}{tail}");
        prop_assert!(codec.verify(&extended, NOW).is_err());
    }

    #[test]
    fn a_cookie_verifies_only_within_its_lifetime(p in principal(), later in SESSION_LIFETIME_SECS..(10 * SESSION_LIFETIME_SECS)) {
        let codec = session_codec();
        let (value, _) = codec.issue(&p, NOW);
        prop_assert_eq!(codec.verify(&value, NOW + later).map(|_| ()), Err(CookieError::Expired));
    }

    #[test]
    fn claims_signed_under_another_mode_never_verify(p in principal(), other in mode()) {
        prop_assume!(other != AuthMode::Password);
        let foreign = SessionCodec::new(other, SECRET, None, "password:binding");
        let claims = SessionClaims::new(&Principal { mode: other, ..p }, NOW);
        prop_assert!(session_codec().verify(&foreign.seal(&claims), NOW).is_err());
    }

    #[test]
    fn claims_sealed_by_any_other_secret_never_verify(p in principal(), secret in "[ -~]{1,64}") {
        prop_assume!(secret != SECRET && secret != PREVIOUS);
        let forger = SessionCodec::new(AuthMode::Password, &secret, None, "password:binding");
        let (value, _) = forger.issue(&p, NOW);
        prop_assert_eq!(session_codec().verify(&value, NOW).map(|_| ()), Err(CookieError::BadSignature));
    }

    #[test]
    fn cookie_values_never_panics_and_finds_what_set_cookie_wrote(
        noise in "[ -~]{0,200}",
        value in "[A-Za-z0-9_.-]{1,100}",
    ) {
        let _ = cookie_values(&noise, SESSION_COOKIE_NAME).count();
        let written = set_cookie(SESSION_COOKIE_NAME, &value, "/", 60, false);
        let pair = written.split(';').next().unwrap();
        let header = format!("a=b; {pair}; c=d");
        let found: Vec<&str> = cookie_values(&header, SESSION_COOKIE_NAME).collect();
        prop_assert_eq!(found, vec![value.as_str()]);
    }

    #[test]
    fn origin_parsing_and_the_same_origin_rule_never_panic(
        method in "(GET|POST|PUT|PATCH|DELETE|OPTIONS|[A-Z]{1,10})",
        origin in proptest::option::of(any::<String>()),
        site in proptest::option::of("(same-origin|none|same-site|cross-site|\\PC{0,20})"),
        host in proptest::option::of(any::<String>()),
        full_url in proptest::option::of(any::<String>()),
    ) {
        let _ = Origin::parse(origin.as_deref().unwrap_or(""));
        let facts = RequestFacts {
            method: &method,
            origin: origin.as_deref(),
            sec_fetch_site: site.as_deref(),
            host: host.as_deref(),
            full_url: full_url.as_deref(),
            app_base: None,
        };
        let _ = check_same_origin(&facts);
    }

    #[test]
    fn an_origin_naming_another_authority_never_passes_for_a_state_change(
        method in "(POST|PUT|PATCH|DELETE)",
        other_host in "[a-z]{1,12}\\.example",
        port in 1u16..,
    ) {
        let origin = format!("https://{other_host}:{port}");
        let facts = RequestFacts {
            method: &method,
            origin: Some(&origin),
            sec_fetch_site: None,
            host: Some("127.0.0.1:3000"),
            full_url: Some("http://127.0.0.1:3000/api/chats"),
            app_base: None,
        };
        prop_assert!(check_same_origin(&facts).is_err());
    }

    #[test]
    fn parsed_origins_serialize_and_parse_back_to_themselves(url in "(http|https|HTTP)://[a-zA-Z0-9.-]{1,30}(:[0-9]{1,5})?(/\\PC{0,20})?") {
        if let Some(o) = Origin::parse(&url) {
            prop_assert_eq!(Origin::parse(&o.serialize()), Some(o));
        }
    }

    #[test]
    fn a_return_path_is_always_a_same_app_path(path in proptest::option::of(any::<String>())) {
        let safe = safe_return_path(path.as_deref());
        prop_assert!(safe.starts_with('/'));
        prop_assert!(!safe.starts_with("//") && !safe.starts_with("/\\"));
        prop_assert!(!safe.chars().any(|c| c.is_control()));
    }
}

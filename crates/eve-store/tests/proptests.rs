//! Property tests of the chat store's parsers and of keyset pagination: the cursor codec and
//! the timestamp format round-trip and keep order; no query string, route, id or index that a
//! client sends makes them panic; and paging through any set of chats (timestamps colliding as
//! they like) with any page size returns every chat exactly once, in order.

use eve_store::cursor::{ChatCursor, MAX_CURSOR_LEN};
use eve_store::ids::{is_valid_chat_id, MAX_CHAT_ID_LEN};
use eve_store::limits::MAX_EVENTS_PER_CHAT;
use eve_store::migrations;
use eve_store::routes;
use eve_store::time::{format_iso_ms, parse_iso_ms, Millis, MAX_MILLIS};
use eve_store::validate::{self, ListQuery};
mod common;

use common::Db;
use eve_store::ChatStore;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn chat_id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,64}"
}

fn millis() -> impl Strategy<Value = Millis> {
    0..=MAX_MILLIS
}

fn cursor() -> impl Strategy<Value = ChatCursor> {
    (millis(), chat_id()).prop_map(|(at, id)| ChatCursor::after(at, &id))
}

/// Strings shaped like cursors (so decoding gets past its first checks) and arbitrary ones.
fn cursor_like() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z::[A-Za-z0-9_\\-:' ]{0,70}",
        "[0-9TZ:.\\-]{20,28}::\\PC{0,10}",
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
    fn a_cursor_round_trips_exactly(c in cursor()) {
        let encoded = c.encode();
        prop_assert!(encoded.len() <= MAX_CURSOR_LEN);
        prop_assert_eq!(ChatCursor::decode(&encoded), Ok(c));
    }

    #[test]
    fn decoding_any_string_never_panics_and_only_accepts_what_encode_writes(text in cursor_like()) {
        if let Ok(c) = ChatCursor::decode(&text) {
            prop_assert_eq!(c.encode(), text);
        }
    }

    #[test]
    fn encoded_cursors_sort_as_their_updated_at_and_id_do(a in cursor(), b in cursor()) {
        let by_key = (a.updated_at, a.id.as_str()).cmp(&(b.updated_at, b.id.as_str()));
        prop_assert_eq!(a.encode().cmp(&b.encode()), by_key);
    }

    #[test]
    fn timestamps_format_at_fixed_width_and_parse_back(ms in millis()) {
        let text = format_iso_ms(ms);
        prop_assert_eq!(text.len(), 24);
        prop_assert_eq!(parse_iso_ms(&text), Some(ms));
    }

    #[test]
    fn formatted_timestamps_sort_as_the_instants_do(a in millis(), b in millis()) {
        prop_assert_eq!(format_iso_ms(a).cmp(&format_iso_ms(b)), a.cmp(&b));
    }

    #[test]
    fn parsing_any_24_characters_never_panics(text in "\\PC{24}|[0-9:TZ.\\-]{24}") {
        if let Some(ms) = parse_iso_ms(&text) {
            prop_assert_eq!(format_iso_ms(ms), text);
        }
    }

    #[test]
    fn the_list_query_parser_never_panics(raw in any::<String>()) {
        let _ = validate::list_query(&raw);
        let _ = validate::export_format(&raw);
    }

    #[test]
    fn the_list_query_parser_never_panics_on_encoded_parameters(
        cursor in cursor_like(), limit in "[-+0-9a-z.]{0,24}", q in "\\PC{0,250}",
    ) {
        let raw: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("cursor", &cursor)
            .append_pair("limit", &limit)
            .append_pair("q", &q)
            .finish();
        if let Ok(query) = validate::list_query(&raw) {
            prop_assert!((1..=100).contains(&query.limit));
        }
    }

    #[test]
    fn routes_ids_and_indices_never_panic(path in "(/api/chats)?[/a-zA-Z0-9%._~:-]{0,80}", segment in any::<String>()) {
        if let Some(resource) = routes::resource(&path) {
            prop_assert!(!resource.methods().is_empty());
            if let Some(id) = resource.chat_id() {
                prop_assert!(!id.is_empty() && !id.contains('/'));
            }
        }
        let _ = routes::resource(&segment);
        let _ = validate::chat_id(&segment);
        let _ = validate::event_index_segment(&segment);
        let _ = validate::message(&segment);
    }

    #[test]
    fn only_short_url_safe_ids_are_chat_ids(id in any::<String>()) {
        if is_valid_chat_id(&id) {
            prop_assert!(!id.is_empty() && id.len() <= MAX_CHAT_ID_LEN);
            prop_assert!(id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        }
    }

    #[test]
    fn an_event_index_segment_is_a_plain_decimal_number_below_the_cap(
        n in 0..MAX_EVENTS_PER_CHAT, over in MAX_EVENTS_PER_CHAT..u64::MAX, junk in "[^0-9]{1,4}",
    ) {
        prop_assert_eq!(validate::event_index_segment(&n.to_string()).ok(), Some(n));
        prop_assert!(validate::event_index_segment(&over.to_string()).is_err());
        let with_junk = format!("{n}{junk}");
        prop_assert!(validate::event_index_segment(&with_junk).is_err());
        let negative = format!("-{}", n + 1);
        prop_assert!(validate::event_index_segment(&negative).is_err());
    }
}

// ------------------------------------------------------------------ keyset pagination

fn migrated() -> Db {
    let db = Db(rusqlite::Connection::open_in_memory().expect("in-memory SQLite"));
    migrations::migrate(&db, 1).expect("migrations");
    db
}

/// Chats to create: distinct ids, timestamps from a small set so that many collide.
fn chats() -> impl Strategy<Value = Vec<(String, Millis)>> {
    proptest::collection::btree_map("[A-Za-z0-9_-]{1,12}", 0i64..6, 0..60).prop_map(|m| {
        m.into_iter()
            .map(|(id, t)| (id, 1_700_000_000_000 + t))
            .collect()
    })
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn paging_returns_every_chat_once_in_updated_at_desc_id_desc_order(
        chats in chats(),
        limit in 1usize..8,
        other_owner in proptest::collection::vec(chat_id(), 0..5),
    ) {
        let db = migrated();
        let store = ChatStore::new(&db, "alice");
        for (id, at) in &chats {
            store.create(id, None, *at).expect("create");
        }
        // Another principal's chats never show up in alice's pages.
        let mallory = ChatStore::new(&db, "mallory");
        for id in other_owner.iter().filter(|id| !chats.iter().any(|(c, _)| c == *id)) {
            mallory.create(id, None, 1_700_000_000_003).expect("create");
        }
        let mut expected: Vec<(Millis, String)> =
            chats.iter().map(|(id, at)| (*at, id.clone())).collect();
        expected.sort();
        expected.reverse();
        let expected: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();

        let mut seen = Vec::new();
        let mut cursor = None;
        for _ in 0..=chats.len() {
            let page = store
                .list(&ListQuery { cursor: cursor.clone(), limit, search: None, pinned: false })
                .expect("list");
            prop_assert!(page.chats.len() <= limit);
            seen.extend(page.chats.iter().map(|c| c.id.clone()));
            match page.next_cursor {
                Some(next) => cursor = Some(ChatCursor::decode(&next).expect("a cursor we wrote")),
                None => break,
            }
        }
        let distinct: BTreeSet<&String> = seen.iter().collect();
        prop_assert_eq!(distinct.len(), seen.len(), "no chat twice");
        prop_assert_eq!(seen, expected, "every chat, in order");
    }
}

//! The routes' decisions and the work loop, run natively: an in-memory SQLite behind the
//! `Sql` seam and an offline platform (the demo model, no network, no waiting).

use std::time::Duration;

use eve_api::eve::{Event, InputResponse};
use eve_store::sql::{Sql, SqlValue};

use crate::connections::jwt::UpstreamJwt;
use crate::connections::mcp::HttpAnswer;
use crate::protocol::{self, SessionRequest};
use crate::providers::http::Transport;
use crate::service::env::{AgentEnv, Method};
use crate::service::sessions::{self, Cancel};
use crate::service::work::{drain, First};
use crate::session::store::testing::Lite;
use crate::session::store::AgentStore;

/// The platform of these tests: the real clock (leases are timed) moved by `skew_ms`, no
/// sleeping, no network, and `vars` as its variables.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offline {
    pub(super) vars: &'static [(&'static str, &'static str)],
    /// How far this node's clock is off the database's.
    pub(super) skew_ms: i64,
}

/// The default configuration (the demo model), on time.
pub(super) const OFFLINE: Offline = Offline {
    vars: &[],
    skew_ms: 0,
};

/// [`OFFLINE`] with these variables.
pub(super) fn configured(vars: &'static [(&'static str, &'static str)]) -> Offline {
    Offline { vars, ..OFFLINE }
}

impl AgentEnv for Offline {
    fn now_ms(&self) -> i64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        now + self.skew_ms
    }
    fn sleep_ms(&self, _: u64) {}
    fn variable(&self, name: &str) -> Option<String> {
        let found = self.vars.iter().find(|(k, _)| *k == name);
        found.map(|(_, v)| v.to_string())
    }
    fn upstream_jwt(&self) -> Option<UpstreamJwt> {
        None
    }
    fn model_transport(&self) -> Box<dyn Transport> {
        unreachable!("the demo model needs no transport")
    }
    fn mcp_post(
        &self,
        url: &str,
        _: &[(String, String)],
        _: &[u8],
        _: Duration,
        _: &mut dyn FnMut() -> bool,
    ) -> Result<HttpAnswer, String> {
        Err(format!("{url} is not reachable in unit tests"))
    }
    fn fetch(
        &self,
        _: Method,
        url: &str,
        _: &[(&str, &str)],
        _: &[u8],
    ) -> Result<(u16, Vec<u8>), String> {
        Err(format!("{url} is not reachable in unit tests"))
    }
}

/// The test's database, lent to a route (which takes its database by value).
pub(super) struct Lent<'a>(pub(super) &'a Lite);

impl Sql for Lent<'_> {
    fn execute(
        &self,
        statement: &str,
        params: Vec<SqlValue>,
    ) -> Result<Vec<Vec<SqlValue>>, String> {
        self.0.execute(statement, params)
    }
}

pub(super) fn db() -> Lite {
    let db = Lite::memory();
    eve_store::migrations::migrate(&db, 1).unwrap();
    db
}

pub(super) fn request(body: &str, new_session: bool) -> SessionRequest {
    protocol::session_request(body.as_bytes(), new_session).unwrap()
}

fn types(db: &Lite, id: &str) -> Vec<&'static str> {
    let events = AgentStore::new(db).all_events(id).unwrap();
    events.iter().map(Event::type_name).collect()
}

/// A session created with `message` and its work run, as `POST /session` does.
fn created(message: &str) -> (Lite, String) {
    let body = format!(r#"{{"message":{message:?}}}"#);
    let (db, id) =
        sessions::create(&OFFLINE, || Ok(db()), "p", request(&body, true), None).unwrap();
    drain(&OFFLINE, &db, &id, "p", First::Nothing, None);
    (db, id)
}

#[test]
fn a_created_sessions_first_message_runs_to_session_waiting_in_the_same_invocation() {
    let (db, id) = created("hi");
    let t = types(&db, &id);
    assert_eq!(
        &t[..3],
        ["session.started", "turn.started", "message.received"]
    );
    assert_eq!(&t[t.len() - 2..], ["turn.completed", "session.waiting"]);
}

#[test]
fn a_message_sent_to_a_waiting_session_opens_its_next_turn() {
    let (db, id) = created("hi");
    let before = types(&db, &id).len();
    let (db, delivery, first) = sessions::send(
        &OFFLINE,
        || Ok(db),
        "p",
        &id,
        request(r#"{"message":"again"}"#, false),
    )
    .unwrap();
    assert!(!delivery.is_empty());
    drain(&OFFLINE, &db, &id, "p", first, None);
    let t = types(&db, &id);
    assert_eq!(&t[before..before + 2], ["turn.started", "message.received"]);
    assert_eq!(t.last(), Some(&"session.waiting"));
}

#[test]
fn another_principals_session_is_not_active_for_a_send() {
    let (db, id) = created("hi");
    let sent = sessions::send(
        &OFFLINE,
        || Ok(db),
        "q",
        &id,
        request(r#"{"message":"x"}"#, false),
    );
    let Err(refused) = sent else {
        panic!("sent to another principal's session")
    };
    assert_eq!(refused.status, 409);
    assert_eq!(refused.code.as_deref(), Some("session_not_active"));
}

#[test]
fn answers_that_match_no_pending_question_are_refused_with_input_not_pending() {
    let (db, id) = created("hi");
    let answer = InputResponse {
        request_id: "req_x".into(),
        option_id: Some("option_0".into()),
        text: None,
    };
    let log = AgentStore::new(&db).all_events(&id).unwrap();
    let refused = sessions::check_answers(&log, &[answer], "p").unwrap_err();
    assert_eq!(refused.status, 409);
    assert_eq!(refused.code.as_deref(), Some("input_not_pending"));
}

#[test]
fn a_question_parks_the_turn_and_its_answer_continues_it() {
    let (db, id) = created("ask me something");
    assert_eq!(types(&db, &id).last(), Some(&"turn.waiting"));
    let log = AgentStore::new(&db).all_events(&id).unwrap();
    let question = crate::turn::pending_question(&log).expect("a question");
    let body = format!(
        r#"{{"inputResponses":[{{"requestId":{:?},"optionId":"option_0"}}]}}"#,
        question.request_id
    );
    let (db, _, first) =
        sessions::send(&OFFLINE, || Ok(db), "p", &id, request(&body, false)).unwrap();
    assert!(matches!(first, First::Answer(_)));
    drain(&OFFLINE, &db, &id, "p", first, None);
    let t = types(&db, &id);
    assert!(t.contains(&"input.resolved"));
    assert_eq!(t.last(), Some(&"session.waiting"));
}

#[test]
fn a_cancel_of_an_idle_session_is_accepted_and_stops_nothing() {
    let (db, id) = created("hi");
    let cancel = sessions::cancel(&OFFLINE, &db, "p", &id, None).unwrap();
    assert_eq!(cancel, Cancel::Accepted { stopping: false });
    let unknown = sessions::cancel(&OFFLINE, &db, "p", "wrun_none", None).unwrap();
    assert_eq!(unknown, Cancel::NoSession);
}

#[test]
fn a_cancel_reaches_only_the_named_open_turn() {
    let (db, id) = created("ask me something");
    let log = AgentStore::new(&db).all_events(&id).unwrap();
    assert!(sessions::cancels_open_turn(&log, None));
    assert!(sessions::cancels_open_turn(&log, Some("turn_0")));
    assert!(!sessions::cancels_open_turn(&log, Some("turn_9")));
}

#[test]
fn a_clear_waits_its_turn_then_clears_the_context_and_settles() {
    let (db, id) = created("hi");
    assert!(sessions::control(&OFFLINE, &db, "p", &id, "clear").unwrap());
    drain(&OFFLINE, &db, &id, "p", First::Nothing, None);
    let t = types(&db, &id);
    assert_eq!(&t[t.len() - 2..], ["context.cleared", "session.waiting"]);
}

#[test]
fn a_reset_session_ends_with_session_completed_and_takes_nothing_more() {
    let (db, id) = created("hi");
    assert!(sessions::reset(&OFFLINE, &db, "p", &id).unwrap());
    assert_eq!(types(&db, &id).last(), Some(&"session.completed"));
    assert!(!sessions::reset(&OFFLINE, &db, "p", &id).unwrap());
    assert!(!sessions::control(&OFFLINE, &db, "p", &id, "clear").unwrap());
}

#[test]
fn files_past_the_principals_quota_are_refused_before_anything_is_kept() {
    let db = db();
    let body = r#"{"message":[{"type":"text","text":"see"},{"type":"file","mediaType":"text/plain","filename":"a.txt","data":"aGVsbG8="}]}"#;
    let policy = crate::protocol::uploads::UploadPolicy::from_vars(None, None, Some("3"));
    let SessionRequest::Message(m) = request(body, true) else {
        panic!("a message")
    };
    let store = AgentStore::new(&db);
    let refused = crate::service::uploads::check(&store, "p", &m, &policy).unwrap_err();
    assert_eq!(refused.status, 413);
    assert_eq!(refused.code.as_deref(), Some("attachment_quota_exceeded"));
    assert_eq!(store.attachment_usage("p").unwrap(), 0);
}

#[test]
fn a_callback_without_an_authentic_state_is_refused_before_the_database_is_opened() {
    let open = || -> Result<Lite, crate::protocol::Refusal> { panic!("opened the database") };
    let callback = crate::service::sign_in::callback(&OFFLINE, open, "p", "state=x&code=y", None);
    let Err(refused) = callback else {
        panic!("a callback without a state was taken")
    };
    assert_eq!(refused.status, 400);
    assert_eq!(refused.message, "invalid or expired authorization state");
}

#[test]
fn the_connect_page_of_a_sign_in_that_is_not_pending_says_so() {
    use crate::service::sign_in::{connect_page, ConnectPage};
    let (db, id) = created("hi");
    let page = connect_page(&OFFLINE, &db, "p", &id, "auth_x", None).unwrap();
    assert_eq!(page, ConnectPage::NotPending);
    let unknown = connect_page(&OFFLINE, &db, "q", &id, "auth_x", None).unwrap_err();
    assert_eq!(unknown.status, 404);
}

/// A response body kept in memory.
#[derive(Default)]
struct Collected(Vec<u8>);

impl crate::service::stream::StreamOut for Collected {
    fn write(&mut self, bytes: &[u8]) -> bool {
        self.0.extend_from_slice(bytes);
        true
    }
    fn closed(&self) -> bool {
        false
    }
}

/// Serves the stream of `id` with `query` into memory: what it came to, and its lines (but
/// the blank preamble and keep-alives).
fn stream_lines(db: &Lite, id: &str, query: &str) -> (crate::service::stream::Served, Vec<String>) {
    use crate::protocol::framing::StreamFormat;
    use crate::service::stream::{open, serve};
    let query = protocol::stream_query(query, None).unwrap();
    let format = StreamFormat::from_accept(None);
    let opened = open(db, "p", id, format, &query).unwrap();
    let mut out = Collected::default();
    let served = serve(&OFFLINE, db, &opened, &mut out);
    let text = String::from_utf8(out.0).unwrap();
    let lines = text.lines().filter(|l| !l.is_empty());
    (served, lines.map(str::to_string).collect())
}

#[test]
fn a_stream_that_does_not_follow_sends_the_log_up_to_its_tail_and_ends() {
    use crate::service::stream::Served;
    let (db, id) = created("hi");
    let (served, lines) = stream_lines(&db, &id, "follow=false");
    assert_eq!(served, Served::Finish);
    assert_eq!(lines.len(), types(&db, &id).len());
    let (_, last_two) = stream_lines(&db, &id, "follow=false&startIndex=-2");
    assert_eq!(last_two.len(), 2);
}

#[test]
fn a_following_stream_of_a_reset_session_sends_everything_and_ends() {
    use crate::service::stream::Served;
    let (db, id) = created("hi");
    assert!(sessions::reset(&OFFLINE, &db, "p", &id).unwrap());
    let (served, lines) = stream_lines(&db, &id, "streamControlVersion=1");
    assert_eq!(served, Served::Finish);
    assert!(lines.last().unwrap().contains("session.completed"));
}

#[test]
fn another_principals_stream_is_not_found() {
    use crate::protocol::framing::StreamFormat;
    let (db, id) = created("hi");
    let query = protocol::stream_query("", None).unwrap();
    let format = StreamFormat::from_accept(None);
    let refused = crate::service::stream::open(&db, "q", &id, format, &query).unwrap_err();
    assert_eq!(refused.status, 404);
}

/// A reader that goes away once it has seen the session settle (eve's CLI, a script).
#[derive(Default)]
struct LeavesOnceSettled {
    seen: Vec<u8>,
    gone: bool,
}

impl crate::service::stream::StreamOut for LeavesOnceSettled {
    fn write(&mut self, bytes: &[u8]) -> bool {
        if self.gone {
            return false;
        }
        self.seen.extend_from_slice(bytes);
        self.gone = String::from_utf8_lossy(&self.seen).contains("session.waiting");
        true
    }
    fn closed(&self) -> bool {
        false // Only a write tells, as on Spin.
    }
}

/// Issue 19 item 9: a following stream whose reader closed once the session settled notices
/// within about a second (a short keep-alive once settled), not at the next 10 s keep-alive,
/// so eve-proxy's slot and this instance are freed.
#[test]
fn a_settled_stream_whose_reader_went_away_ends_within_a_second() {
    use crate::protocol::framing::StreamFormat;
    use crate::service::stream::{open, serve, Served};
    let (db, id) = created("hi");
    let query = protocol::stream_query("", None).unwrap();
    let opened = open(&db, "p", &id, StreamFormat::from_accept(None), &query).unwrap();
    let mut out = LeavesOnceSettled::default();
    let started = std::time::Instant::now();
    let served = serve(&OFFLINE, &db, &opened, &mut out);
    assert_eq!(served, Served::Gone);
    assert!(out.gone);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1500), "took {took:?}");
}

/// A message queued on `id` and left for a runner (as a send whose work has not run yet).
fn queued(db: Lite, id: &str) -> Lite {
    let body = request(r#"{"message":"again"}"#, false);
    sessions::send(&OFFLINE, || Ok(db), "p", id, body)
        .unwrap()
        .0
}

/// Issue 24: the database's clock decides a lease, not the node's. Node A holds the lease of a
/// session with work waiting (as mid-turn); node B, whose clock runs an hour ahead, neither
/// sees the session orphaned nor takes the lease over, so the two cannot both hold it.
#[test]
fn a_node_whose_clock_runs_ahead_does_not_take_a_live_lease() {
    use crate::session::store::{Clock, SessionState};
    let (db, id) = created("hi");
    let db = queued(db, &id);
    let before = types(&db, &id).len();
    let store = AgentStore::new(&db);
    assert!(store
        .claim(&id, "p", "runner-a", Clock::Database)
        .unwrap()
        .is_some());
    let ahead = Offline {
        skew_ms: 60 * 60 * 1000,
        ..OFFLINE
    };
    let row = store.session(&id, "p").unwrap().unwrap();
    assert_eq!(row.state(), SessionState::Running);
    drain(&ahead, &db, &id, "p", First::Nothing, None);
    assert_eq!(types(&db, &id).len(), before, "B wrote nothing");
    let (_, owner, _) = store.runner_state(&id).unwrap().unwrap();
    assert_eq!(owner.as_deref(), Some("runner-a"));
    // A renews (by the database's clock); B, however far ahead, still cannot claim.
    assert!(store
        .renew(&id, "runner-a", Clock::Database)
        .unwrap()
        .is_some());
    let claimed = store.claim(&id, "p", "runner-b", Clock::Database);
    assert_eq!(claimed.unwrap(), None);
}

/// The other way round: a node whose clock runs an hour behind takes over a lease that expired
/// by the database's clock at once (by its own clock it would look live for another hour).
#[test]
fn a_node_whose_clock_runs_behind_takes_over_an_expired_lease_at_once() {
    use crate::session::store::{Clock, SessionState, LEASE_MS};
    let (db, id) = created("hi");
    let db = queued(db, &id);
    let store = AgentStore::new(&db);
    // A claimed ten leases ago and died.
    let long_ago = Clock::At(OFFLINE.now_ms() - 10 * LEASE_MS);
    assert!(store.claim(&id, "p", "dead", long_ago).unwrap().is_some());
    let row = store.session(&id, "p").unwrap().unwrap();
    assert_eq!(row.state(), SessionState::Orphaned);
    drain(
        &Offline {
            skew_ms: -60 * 60 * 1000,
            ..OFFLINE
        },
        &db,
        &id,
        "p",
        First::Nothing,
        None,
    );
    let t = types(&db, &id);
    assert_eq!(t.last(), Some(&"session.waiting"));
    assert_eq!(t.iter().filter(|t| **t == "turn.completed").count(), 2);
}

/// A server added as data joins the variable's (read on each call); a disabled one does not;
/// one whose URL the guard refuses with today's allow-list is kept but blocked; one named like
/// a variable server is left out.
#[test]
fn the_connections_are_the_variables_then_the_enabled_data_servers_each_guarded() {
    use eve_api::mcp_servers::{CreateMcpServer, McpAuth, McpServerPatch};
    use eve_runtime::mcp_servers::{create, patch, Rules};
    let db = db();
    let allowed = vec!["127.0.0.1".to_string()];
    let rules = Rules {
        reserved: &[],
        allowed: &allowed,
        keys: None,
    };
    let add = |id: &str, name: &str, url: &str| {
        let new = CreateMcpServer {
            name: name.into(),
            display_name: None,
            description: None,
            url: url.into(),
            auth: McpAuth::None,
            token: None,
        };
        create(&db, &rules, id, &new, 1).unwrap();
    };
    add("m1", "local", "http://127.0.0.1:9/mcp");
    add("m2", "off", "https://off.example.com/mcp");
    add("m3", "docs", "https://docs.example.com/mcp");
    let off = McpServerPatch {
        enabled: Some(false),
        ..Default::default()
    };
    patch(&db, &rules, "m2", &off, 2).unwrap();

    let vars = configured(&[
        (
            "mcp_connections",
            r#"[{"name":"docs","url":"https://v.example.com/mcp"}]"#,
        ),
        ("outbound_allowed_hosts", "127.0.0.1"),
    ]);
    let all = crate::service::env::mcp_connections(&vars, &db);
    let seen: Vec<(&str, &str, bool)> = all
        .iter()
        .map(|c| (c.name.as_str(), c.url.as_str(), c.blocked.is_some()))
        .collect();
    assert_eq!(
        seen,
        [
            ("docs", "https://v.example.com/mcp", false),
            ("local", "http://127.0.0.1:9/mcp", false)
        ]
    );
    let shrunk = configured(&[]);
    let all = crate::service::env::mcp_connections(&shrunk, &db);
    let local = all.iter().find(|c| c.name == "local").unwrap();
    assert!(
        local.blocked.as_deref().unwrap().contains("127.0.0.1"),
        "{local:?}"
    );
    assert!(crate::service::sign_in::mcp_connection(&shrunk, &db, "local").is_none());
}

#[test]
fn a_disabled_data_model_is_refused_as_not_allowed_and_an_unknown_one_as_unknown() {
    use eve_api::providers::{ProviderCreate, ProviderKind, ProviderModel};
    let db = db();
    let model = |name: &str, enabled| ProviderModel {
        model: name.into(),
        label: None,
        enabled,
        context_tokens: None,
        shadowed: false,
    };
    let body = ProviderCreate {
        name: "acme".into(),
        kind: ProviderKind::Openai,
        base_url: None,
        api_key: None,
        max_tokens: None,
        models: vec![model("on", true), model("off", false)],
    };
    eve_runtime::providers::create(&db, None, &[], &body, 1).unwrap();
    let send = |model: &str| {
        let body = format!(r#"{{"message":"hi","model":{model:?}}}"#);
        sessions::create(&OFFLINE, || Ok(Lent(&db)), "p", request(&body, true), None)
            .map(|(_, id)| id)
    };
    let refused = send("acme/off").unwrap_err();
    assert_eq!(
        (refused.status, refused.code.as_deref()),
        (403, Some("model_not_allowed"))
    );
    let refused = send("elsewhere/x").unwrap_err();
    assert_eq!(refused.status, 400);
    let ids: Vec<String> = crate::service::env::model_choices(&OFFLINE, &db)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, ["demo/eve-demo", "acme/on"]);
}

#[test]
fn a_message_whose_model_is_disabled_before_its_turn_runs_fails_the_turn() {
    use eve_api::providers::{ProviderCreate, ProviderKind, ProviderModel, ProviderPatch};
    let db = db();
    let on = |enabled| ProviderModel {
        model: "m".into(),
        label: None,
        enabled,
        context_tokens: None,
        shadowed: false,
    };
    let body = ProviderCreate {
        name: "acme".into(),
        kind: ProviderKind::Openai,
        base_url: None,
        api_key: None,
        max_tokens: None,
        models: vec![on(true)],
    };
    let p = eve_runtime::providers::create(&db, None, &[], &body, 1).unwrap();
    let message = r#"{"message":"hi","model":"acme/m"}"#;
    let (_, id) = sessions::create(
        &OFFLINE,
        || Ok(Lent(&db)),
        "p",
        request(message, true),
        None,
    )
    .unwrap();
    let off = ProviderPatch {
        models: Some(vec![on(false)]),
        ..Default::default()
    };
    eve_runtime::providers::patch(&db, None, &[], &p.id, &off, 2).unwrap();
    drain(&OFFLINE, &db, &id, "p", First::Nothing, None);
    let events = AgentStore::new(&db).all_events(&id).unwrap();
    let text = serde_json::to_string(&events).unwrap();
    assert!(text.contains("is no longer offered"), "{text}");
    assert!(!types(&db, &id).contains(&"turn.completed"));
}

//! OIDC sign-in: `GET /api/auth/oidc/start` and `GET /api/auth/oidc/callback`. Both are browser
//! navigations, so a failed flow redirects to `/?authError=<code>` (see `eve_api::auth`)
//! instead of showing a JSON page, and an account that may not sign in (not on the allowlist,
//! email not verified) gets a 403 page saying so; the reason is logged without secrets or
//! tokens. Both are throttled per client address (each may cost requests to the provider),
//! and a flow completes at most once: its callback marks it used in key-value before the
//! provider is asked anything, so a replayed callback URL and flow cookie is refused.

use eve_api::auth::AUTH_ERROR_QUERY_PARAM;
use eve_api::ApiError;
use eve_auth::config::AuthConfig;
use eve_auth::cookie::cookie_values;
use eve_auth::oidc::{
    self, Discovery, FlowCodec, FlowState, IdTokenChecks, OidcError, CALLBACK_PATH,
    FLOW_COOKIE_NAME, MAX_PROVIDER_BODY_BYTES, USED_FLOW_PREFIX,
};
use eve_auth::origin::safe_return_path;
use eve_spin::auth as glue;
use spin_sdk::http::{Method, Request, Response};
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

use crate::reply::Reply;

/// `oidc:start` attempts per client address per window (each costs a discovery fetch).
const START_LIMIT_PER_ADDRESS: u64 = 30;
const START_WINDOW_SECS: u64 = 15 * 60;
const START_PREFIX: &str = "oidc:start";
/// `oidc:callback` attempts per client address per window: a genuine sign-in needs one, and
/// each may cost a token and a userinfo request with the client secret.
const CALLBACK_LIMIT_PER_ADDRESS: u64 = 30;
const CALLBACK_WINDOW_SECS: u64 = 15 * 60;
const CALLBACK_PREFIX: &str = "oidc:callback";

/// Everything the flow needs from the configuration, present only when OIDC is ready.
struct OidcSettings<'a> {
    issuer: &'a str,
    client_id: &'a str,
    client_secret: &'a str,
    flow: FlowCodec,
}

fn settings(config: &AuthConfig) -> Option<OidcSettings<'_>> {
    let resolution = config.resolve();
    let oidc_mode = resolution.mode == eve_api::auth::AuthMode::Oidc || config.accounts_oidc();
    if !oidc_mode || !resolution.ready {
        return None;
    }
    let issuer = config.usable_issuer()?;
    let client_id = config.oidc_client_id.as_deref()?;
    let flow = FlowCodec::new(
        config.usable_session_secret()?.expose(),
        config.usable_previous_secret().map(|s| s.expose()),
        issuer,
        client_id,
    );
    Some(OidcSettings {
        issuer,
        client_id,
        client_secret: config.oidc_client_secret.as_ref()?.expose(),
        flow,
    })
}

fn query_param(req: &Request, name: &str) -> Option<String> {
    form_urlencoded::parse(req.query().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// `/?authError=<code>[&authErrorDetail=<provider code>]`.
fn error_location(code: &str, detail: Option<&str>) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair(AUTH_ERROR_QUERY_PARAM, code);
    if let Some(detail) = detail {
        query.append_pair("authErrorDetail", detail);
    }
    format!("/?{}", query.finish())
}

fn fail(err: &OidcError, email: Option<&str>) -> Reply {
    eprintln!("auth: oidc sign-in failed: {err}");
    if err.is_refusal() {
        return Reply::html(403, &refusal_page(err, email));
    }
    Reply::redirect(&error_location(err.code(), err.provider_code()))
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page an account that may not use this app sees: who it signed in as, and why not.
fn refusal_page(err: &OidcError, email: Option<&str>) -> String {
    let account = email
        .map(|e| format!(" as <strong>{}</strong>", escape_html(e)))
        .unwrap_or_default();
    let reason = match err {
        OidcError::EmailUnverified => {
            "Your provider does not say this account's email address is verified. Verify it with \
             the provider, or sign in with another account."
        }
        _ => {
            "This account is not allowed to use this eve-chat. Ask its owner to add your email \
             address (or its domain), or sign in with another account."
        }
    };
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Sign-in refused · eve-chat</title></head>\
         <body style=\"font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; \
         padding: 0 1rem; line-height: 1.5\">\
         <h1>Sign-in refused</h1><p>You signed in{account}.</p><p>{reason}</p>\
         <p><a href=\"/\">Back to eve-chat</a></p></body></html>\n"
    )
}

fn redirect_uri(config: &AuthConfig, req: &Request) -> Option<String> {
    Some(format!(
        "{}{CALLBACK_PATH}",
        glue::base_origin(config, req)?.serialize()
    ))
}

async fn fetch(request: Request) -> Result<(u16, Vec<u8>), ()> {
    let response: Response = spin_sdk::http::send(request).await.map_err(|_| ())?;
    let body = response.body();
    if body.len() > MAX_PROVIDER_BODY_BYTES {
        return Err(());
    }
    Ok((*response.status(), body.to_vec()))
}

async fn discover(issuer: &str) -> Result<Discovery, OidcError> {
    let request = Request::builder()
        .method(Method::Get)
        .uri(oidc::discovery_url(issuer))
        .header("accept", "application/json")
        .build();
    let (status, body) = fetch(request)
        .await
        .map_err(|_| OidcError::Discovery("provider unreachable"))?;
    if status != 200 {
        return Err(OidcError::Discovery("discovery document not found"));
    }
    oidc::parse_discovery(&body, issuer)
}

/// `GET /api/auth/oidc/start[?returnTo=/path]`: remembers state, PKCE verifier and nonce in a
/// signed ten-minute cookie and redirects to the provider.
pub async fn start(req: &Request) -> Reply {
    let config = glue::config();
    let Some(s) = settings(&config) else {
        return Reply::redirect(&error_location("not_configured", None));
    };
    if glue::insecure_origin(&config, req) {
        return Reply::redirect(&error_location("https_required", None));
    }
    if let Err(e) = eve_spin::ratelimit::check(
        START_PREFIX,
        &glue::client_ip_with(&config, req),
        START_LIMIT_PER_ADDRESS,
        START_WINDOW_SECS,
    ) {
        return Reply::error(&e);
    }
    let Some(redirect_uri) = redirect_uri(&config, req) else {
        return Reply::error(&ApiError::bad_request(
            "cannot tell this app's URL; set app_base_url",
        ));
    };
    let discovery = match discover(s.issuer).await {
        Ok(d) => d,
        Err(e) => return fail(&e, None),
    };
    let return_to = safe_return_path(query_param(req, "returnTo").as_deref());
    let flow = FlowState::new(return_to, glue::now_secs());
    let location = oidc::authorize_url(&discovery, s.client_id, &redirect_uri, &flow);
    let cookie = oidc::flow_set_cookie(&s.flow.seal(&flow));
    Reply::redirect(&location).with_cookie(Some(cookie))
}

/// `GET /api/auth/oidc/callback?code&state` (or `?error`): checks the state, exchanges the code,
/// validates the ID token, requires an email, signs the session cookie and returns the browser
/// to where it started. The flow cookie is cleared whatever happens. Throttled per address
/// (429 with `Retry-After`), and each flow is single-use.
pub async fn callback(req: &Request) -> Reply {
    let config = glue::config();
    let clear_flow = oidc::flow_clear_cookie();
    let Some(s) = settings(&config) else {
        return Reply::redirect(&error_location("not_configured", None))
            .with_cookie(Some(clear_flow));
    };
    if let Err(e) = eve_spin::ratelimit::check(
        CALLBACK_PREFIX,
        &glue::client_ip_with(&config, req),
        CALLBACK_LIMIT_PER_ADDRESS,
        CALLBACK_WINDOW_SECS,
    ) {
        return Reply::error(&e).with_cookie(Some(clear_flow));
    }
    let reply = match complete(&config, &s, req).await {
        Ok((session_cookie, return_to)) => {
            Reply::redirect(&return_to).with_cookie(Some(session_cookie))
        }
        Err((e, email)) => fail(&e, email.as_deref()),
    };
    reply.with_cookie(Some(clear_flow))
}

/// The session cookie and the return path; or why not, with the email the provider named
/// when it got that far (for the refusal page).
async fn complete(
    config: &AuthConfig,
    s: &OidcSettings<'_>,
    req: &Request,
) -> Result<(String, String), (OidcError, Option<String>)> {
    let (identity, return_to) = identify(config, s, req).await.map_err(|e| (e, None))?;
    let refused = |e: OidcError| (e, identity.email.clone());
    let mut principal =
        oidc::principal_for(s.issuer, &identity, &config.allowlist()).map_err(refused)?;
    if config.mode() == eve_api::auth::AuthMode::Accounts {
        principal = account_principal(config, &principal).map_err(refused)?;
    }
    let codec = config
        .session_codec()
        .ok_or_else(|| refused(OidcError::InvalidState))?;
    let now = glue::now_secs();
    // Unreadable logout time: the session is dated now (the next request reports the store).
    let signed_in_at = glue::sign_in_time(&principal.id, now).unwrap_or(now);
    let (value, claims) = codec.issue_signed_in_at(&principal, now, signed_in_at);
    let cookie = glue::session_set_cookie(&value, claims.max_age(now));
    Ok((cookie, return_to))
}

/// Accounts mode: the account of this OIDC user (made at the first sign-in, an admin when its
/// email is in `oidc_admin_emails`), as the session's principal. A disabled account, or a
/// database that does not answer, refuses the sign-in; an account with a password and this
/// email is `account_exists` (never joined by email).
fn account_principal(
    config: &AuthConfig,
    oidc_principal: &eve_api::auth::Principal,
) -> Result<eve_api::auth::Principal, OidcError> {
    let email = oidc_principal.email.as_deref().unwrap_or_default();
    let db = eve_spin::db::open().map_err(|_| OidcError::StoreUnavailable)?;
    let user = eve_accounts::accounts::OidcUser {
        subject: &oidc_principal.id,
        email,
        name: oidc_principal.name.as_deref(),
        admin: config.oidc_admin(email),
    };
    match eve_accounts::accounts::oidc_account(&db, &user, eve_spin::db::now_ms()) {
        Ok(account) => {
            let p = account.principal_id();
            eve_accounts::audit::record_best_effort(
                &db,
                &eve_accounts::audit::AuditEntry {
                    at_ms: eve_spin::db::now_ms(),
                    actor: Some(&p),
                    action: "signin",
                    target: Some(&p),
                    detail: Some(serde_json::json!({"via": "oidc"})),
                },
            );
            Ok(crate::accounts::principal(&account))
        }
        Err(e) => {
            eprintln!("auth: oidc sign-in to an account refused: {}", e.message);
            Err(match e.code {
                eve_api::ErrorCode::Conflict => OidcError::AccountExists,
                _ => OidcError::NotAllowed,
            })
        }
    }
}

/// Who the provider says signed in, and the return path of the flow.
async fn identify(
    config: &AuthConfig,
    s: &OidcSettings<'_>,
    req: &Request,
) -> Result<(oidc::Identity, String), OidcError> {
    let now = glue::now_secs();
    let cookies = req
        .header("cookie")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let flow = cookie_values(cookies, FLOW_COOKIE_NAME)
        .take(4)
        .find_map(|v| s.flow.open(v, now).ok())
        .ok_or(OidcError::InvalidState)?;
    oidc::check_state(&flow, query_param(req, "state").as_deref())?;
    mark_used(&flow, now)?;
    if let Some(error) = query_param(req, "error") {
        return Err(OidcError::Provider(oidc::sanitize_code(&error)));
    }
    let code = query_param(req, "code")
        .filter(|c| !c.is_empty())
        .ok_or(OidcError::Provider("no_code".into()))?;
    let redirect_uri = redirect_uri(config, req).ok_or(OidcError::InvalidState)?;
    let discovery = discover(s.issuer).await?;

    let token = oidc::token_request(
        &discovery,
        s.client_id,
        s.client_secret,
        &redirect_uri,
        &code,
        &flow.verifier,
    );
    let mut builder = Request::builder();
    builder
        .method(Method::Post)
        .uri(token.url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(token.body);
    if let Some(authorization) = token.authorization {
        builder.header("authorization", authorization);
    }
    let (status, body) = fetch(builder.build())
        .await
        .map_err(|_| OidcError::TokenRejected("provider_unreachable".into()))?;
    let tokens = oidc::parse_token_response(status, &body)?;

    let checks = IdTokenChecks {
        issuer: s.issuer,
        client_id: s.client_id,
        client_secret: s.client_secret,
        nonce: &flow.nonce,
        now,
    };
    let mut identity = oidc::validate_id_token(&tokens.id_token, &checks)?;
    if oidc::needs_userinfo(&identity) {
        if let (Some(endpoint), Some(access_token)) =
            (&discovery.userinfo_endpoint, &tokens.access_token)
        {
            let request = Request::builder()
                .method(Method::Get)
                .uri(endpoint)
                .header("authorization", format!("Bearer {access_token}"))
                .header("accept", "application/json")
                .build();
            match fetch(request).await {
                Ok((200, body)) => match oidc::merge_userinfo(identity.clone(), &body) {
                    Ok(merged) => identity = merged,
                    Err(e) if identity.email.is_none() => return Err(e),
                    Err(_) => {}
                },
                _ if identity.email.is_none() => {
                    return Err(OidcError::Userinfo("userinfo request failed"))
                }
                _ => {}
            }
        }
    }
    Ok((identity, flow.return_to))
}

fn store_error(e: store::Error) -> OidcError {
    eprintln!("auth: key-value store error marking an oidc flow used: {e:?}");
    OidcError::StoreUnavailable
}

/// Marks `flow` used, or refuses it when a callback of it already ran: one atomic increment of
/// its marker, so of two racing callbacks exactly one gets 1. Before anything is sent to the
/// provider. A store failure refuses the flow (fail closed).
fn mark_used(flow: &FlowState, now: u64) -> Result<(), OidcError> {
    let bucket = store::open(eve_spin::ratelimit::STORE).map_err(store_error)?;
    let uses = atomics::increment(&bucket, &oidc::used_flow_key(flow), 1).map_err(store_error)?;
    sweep_used_flows(&bucket, now);
    if uses == 1 {
        Ok(())
    } else {
        Err(OidcError::FlowUsed)
    }
}

/// Key-value has no TTL: once an hour (the first callback of the hour does it) the markers of
/// flows that have expired are deleted. Best effort.
fn sweep_used_flows(bucket: &store::Bucket, now: u64) {
    let hour = now / 3600;
    if atomics::increment(bucket, &format!("oidc:used-sweep:{hour}"), 1).ok() != Some(1) {
        return;
    }
    let _ = bucket.delete(&format!("oidc:used-sweep:{}", hour.saturating_sub(1)));
    let Ok(listing) = bucket.list_keys(None) else {
        return;
    };
    for key in listing.keys {
        if key.starts_with(USED_FLOW_PREFIX) && oidc::used_flow_key_expired(&key, now) {
            let _ = bucket.delete(&key);
        }
    }
}

//! A small OpenID Connect provider for the auth tests, speaking the real wire protocol on a
//! loopback port: discovery, authorize (redirects straight back — the "user" is chosen by the
//! test), token (authorization code + PKCE S256, client_secret_basic, single-use codes,
//! an HS256 ID token keyed with the client secret) and userinfo.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use eve_auth::crypto::{b64url, hmac_sha256, sha256};

pub const CLIENT_ID: &str = "eve-chat-test";
pub const CLIENT_SECRET: &str = "test-client-secret-for-the-local-provider";

/// Who signs in at the next authorize request, and how the provider behaves.
#[derive(Debug, Clone)]
pub struct NextUser {
    pub sub: String,
    pub email: Option<String>,
    pub name: Option<String>,
    /// The `email_verified` claim sent with the email (`None`: the claim is left out).
    pub email_verified: Option<bool>,
    /// Put email and name only in userinfo, not in the ID token.
    pub email_only_in_userinfo: bool,
    /// Redirect back with `error=access_denied` instead of a code.
    pub deny: bool,
}

impl Default for NextUser {
    fn default() -> Self {
        NextUser {
            sub: "user-1".into(),
            email: Some("eve@example.com".into()),
            name: Some("Eve Example".into()),
            email_verified: Some(true),
            email_only_in_userinfo: false,
            deny: false,
        }
    }
}

#[derive(Debug, Clone)]
struct Grant {
    challenge: String,
    nonce: String,
    redirect_uri: String,
    user: NextUser,
    used: bool,
}

#[derive(Default)]
struct State {
    next_user: NextUser,
    grants: HashMap<String, Grant>,
    access_tokens: HashMap<String, NextUser>,
    counter: u64,
    token_requests: u64,
}

/// A running provider; it stops with the test process.
#[derive(Clone)]
pub struct Provider {
    pub issuer: String,
    state: Arc<Mutex<State>>,
}

struct HttpRequest {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

fn parse_query(q: &str) -> HashMap<String, String> {
    url_decode_pairs(q)
}

fn url_decode_pairs(s: &str) -> HashMap<String, String> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn read_request(stream: &mut TcpStream) -> Option<HttpRequest> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
        body
    } else {
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body).ok()?;
        body
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Some(HttpRequest {
        method,
        path: path.to_string(),
        query: parse_query(query),
        headers,
        body,
    })
}

fn respond(stream: &mut TcpStream, status: u16, headers: &[(&str, String)], body: &str) {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    // The client may have gone; the test that cares will notice.
    let _ = stream.write_all(out.as_bytes());
}

fn json_response(stream: &mut TcpStream, status: u16, body: serde_json::Value) {
    respond(
        stream,
        status,
        &[("content-type", "application/json".into())],
        &body.to_string(),
    );
}

fn id_token(issuer: &str, user: &NextUser, nonce: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut claims = serde_json::json!({
        "iss": issuer, "aud": CLIENT_ID, "sub": user.sub, "iat": now, "exp": now + 300, "nonce": nonce,
    });
    if !user.email_only_in_userinfo {
        if let Some(email) = &user.email {
            claims["email"] = email.clone().into();
            if let Some(verified) = user.email_verified {
                claims["email_verified"] = verified.into();
            }
        }
        if let Some(name) = &user.name {
            claims["name"] = name.clone().into();
        }
    }
    let signed = format!(
        "{}.{}",
        b64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes())
    );
    let sig = hmac_sha256(CLIENT_SECRET.as_bytes(), signed.as_bytes());
    format!("{signed}.{}", b64url(&sig))
}

impl Provider {
    /// Starts the provider on a free loopback port.
    pub fn start() -> Provider {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test provider");
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let provider = Provider {
            issuer,
            state: Arc::new(Mutex::new(State::default())),
        };
        let server = provider.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let server = server.clone();
                thread::spawn(move || {
                    if let Some(req) = read_request(&mut stream) {
                        server.handle(&mut stream, req);
                    }
                });
            }
        });
        provider
    }

    /// Sets who signs in at the next authorize request.
    pub fn set_next_user(&self, user: NextUser) {
        self.state.lock().unwrap().next_user = user;
    }

    /// How many token requests reached the provider.
    pub fn token_requests(&self) -> u64 {
        self.state.lock().unwrap().token_requests
    }

    fn handle(&self, stream: &mut TcpStream, req: HttpRequest) {
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/.well-known/openid-configuration") => json_response(
                stream,
                200,
                serde_json::json!({
                    "issuer": self.issuer,
                    "authorization_endpoint": format!("{}/authorize", self.issuer),
                    "token_endpoint": format!("{}/token", self.issuer),
                    "userinfo_endpoint": format!("{}/userinfo", self.issuer),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["HS256"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                }),
            ),
            ("GET", "/authorize") => self.authorize(stream, &req),
            ("POST", "/token") => self.token(stream, &req),
            ("GET", "/userinfo") => self.userinfo(stream, &req),
            _ => respond(stream, 404, &[], "not found"),
        }
    }

    fn authorize(&self, stream: &mut TcpStream, req: &HttpRequest) {
        let q = &req.query;
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let scopes: Vec<String> = get("scope").split(' ').map(String::from).collect();
        let valid = get("response_type") == "code"
            && get("client_id") == CLIENT_ID
            && get("code_challenge_method") == "S256"
            && !get("code_challenge").is_empty()
            && scopes.iter().any(|s| s == "openid")
            && scopes.iter().any(|s| s == "email");
        if !valid {
            return respond(stream, 400, &[], "invalid authorize request");
        }
        let redirect_uri = get("redirect_uri");
        let state = get("state");
        let mut s = self.state.lock().unwrap();
        let user = s.next_user.clone();
        let location = if user.deny {
            format!(
                "{redirect_uri}?error=access_denied&error_description=denied&state={}",
                percent_encode(&state)
            )
        } else {
            s.counter += 1;
            let code = format!("code-{}", s.counter);
            let grant = Grant {
                challenge: get("code_challenge"),
                nonce: get("nonce"),
                redirect_uri: redirect_uri.clone(),
                user,
                used: false,
            };
            s.grants.insert(code.clone(), grant);
            format!(
                "{redirect_uri}?code={}&state={}",
                percent_encode(&code),
                percent_encode(&state)
            )
        };
        respond(stream, 302, &[("location", location)], "");
    }

    fn token(&self, stream: &mut TcpStream, req: &HttpRequest) {
        let form = url_decode_pairs(&String::from_utf8_lossy(&req.body));
        let expected_basic = {
            use base64::Engine;
            let pair = format!(
                "{}:{}",
                percent_encode(CLIENT_ID),
                percent_encode(CLIENT_SECRET)
            );
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        };
        let mut s = self.state.lock().unwrap();
        s.token_requests += 1;
        if req.headers.get("authorization") != Some(&expected_basic) {
            return json_response(stream, 401, serde_json::json!({"error": "invalid_client"}));
        }
        let code = form.get("code").cloned().unwrap_or_default();
        let Some(grant) = s.grants.get_mut(&code) else {
            return json_response(stream, 400, serde_json::json!({"error": "invalid_grant"}));
        };
        let verifier = form.get("code_verifier").cloned().unwrap_or_default();
        let pkce_ok = b64url(&sha256(verifier.as_bytes())) == grant.challenge;
        let valid = !grant.used
            && pkce_ok
            && form.get("grant_type").map(String::as_str) == Some("authorization_code")
            && form.get("redirect_uri") == Some(&grant.redirect_uri);
        grant.used = true;
        if !valid {
            return json_response(stream, 400, serde_json::json!({"error": "invalid_grant"}));
        }
        let grant = grant.clone();
        s.counter += 1;
        let access_token = format!("at-{}", s.counter);
        s.access_tokens
            .insert(access_token.clone(), grant.user.clone());
        let body = serde_json::json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": id_token(&self.issuer, &grant.user, &grant.nonce),
        });
        json_response(stream, 200, body);
    }

    fn userinfo(&self, stream: &mut TcpStream, req: &HttpRequest) {
        let token = req
            .headers
            .get("authorization")
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or("");
        let s = self.state.lock().unwrap();
        let Some(user) = s.access_tokens.get(token) else {
            return json_response(stream, 401, serde_json::json!({"error": "invalid_token"}));
        };
        let mut claims = serde_json::json!({ "sub": user.sub });
        if let Some(email) = &user.email {
            claims["email"] = email.clone().into();
            if let Some(verified) = user.email_verified {
                claims["email_verified"] = verified.into();
            }
        }
        if let Some(name) = &user.name {
            claims["name"] = name.clone().into();
        }
        json_response(stream, 200, claims);
    }
}

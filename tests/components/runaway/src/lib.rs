//! A deliberately bad guest for the local host's attack suite (`tests/tests/attack_host.rs`).
//! Each path does one thing the host must survive or refuse:
//!
//! - `/ok`: answers 200 `ok` (after reading the whole body, as every spin-sdk handler does).
//! - `/loop`: spins forever without calling the host.
//! - `/hog`: allocates memory until the allocation fails, logging `holding <n> MiB` every 8.
//! - `/sql`: runs the request body as one SQL statement on the `default` database and answers
//!   `{"rows": n}` or `{"error": "..."}`.
//! - `/out?<url>`: sends a GET to `<url>` and answers `{"status": n}` or `{"error": "..."}`.
//! - `/stream`: answers 200 at once, then writes `tick` lines every 100 ms until the reader
//!   goes away (or the host ends the instance).

use eve_spin::streaming::{respond, sleep_ms, BodyWriter};
use serde_json::json;
use spin_sdk::http::{Method, Request, Response, ResponseOutparam};
use spin_sdk::http_component;
use spin_sdk::sqlite::Connection;

fn reply(body: serde_json::Value) -> (u16, Vec<u8>) {
    (200, body.to_string().into_bytes())
}

#[http_component]
async fn handle(req: Request, out: ResponseOutparam) {
    let path = req
        .header("spin-path-info")
        .and_then(|h| h.as_str())
        .unwrap_or("")
        .to_string();
    let (status, body) = match path.as_str() {
        "/ok" => (200, b"ok".to_vec()),
        "/stream" => {
            let mut w = BodyWriter::start(out, 200, &[]);
            while w.write(b"tick\n") {
                sleep_ms(100);
            }
            return;
        }
        "/loop" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "/hog" => {
            let mut held: Vec<Vec<u8>> = Vec::new();
            loop {
                // Touch every page so the memory is really committed.
                held.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&held);
                if held.len().is_multiple_of(8) {
                    eprintln!("holding {} MiB", held.len());
                }
            }
        }
        "/sql" => {
            let sql = String::from_utf8_lossy(req.body()).into_owned();
            let r = Connection::open_default().and_then(|c| c.execute(&sql, &[]));
            match r {
                Ok(rows) => reply(json!({ "rows": rows.rows.len() })),
                Err(e) => reply(json!({ "error": format!("{e:?}") })),
            }
        }
        "/out" => {
            let url = req.query().to_string();
            let r: Result<Response, _> =
                spin_sdk::http::send(Request::new(Method::Get, url.as_str())).await;
            match r {
                Ok(resp) => reply(json!({ "status": resp.status() })),
                Err(e) => reply(json!({ "error": format!("{e:?}") })),
            }
        }
        other => (404, format!("no probe {other}").into_bytes()),
    };
    respond(out, status, &[], &body);
}

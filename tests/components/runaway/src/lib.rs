//! A deliberately bad guest for the local host's attack suite (`tests/tests/attack_host.rs`).
//! Each path does one thing the host must survive or refuse:
//!
//! - `/ok`: answers 200 `ok` (after reading the whole body, as every spin-sdk handler does).
//! - `/loop`: spins forever without calling the host.
//! - `/hog`: allocates memory until the allocation fails.
//! - `/sql`: runs the request body as one SQL statement on the `default` database and answers
//!   `{"rows": n}` or `{"error": "..."}`.
//! - `/out?<url>`: sends a GET to `<url>` and answers `{"status": n}` or `{"error": "..."}`.

use serde_json::json;
use spin_sdk::http::{IntoResponse, Method, Request, Response};
use spin_sdk::http_component;
use spin_sdk::sqlite::Connection;

fn reply(body: serde_json::Value) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(body.to_string())
        .build()
}

#[http_component]
async fn handle(req: Request) -> anyhow::Result<impl IntoResponse> {
    let path = req
        .header("spin-path-info")
        .and_then(|h| h.as_str())
        .unwrap_or("")
        .to_string();
    Ok(match path.as_str() {
        "/ok" => Response::new(200, "ok"),
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
        other => Response::new(404, format!("no probe {other}")),
    })
}

//! The `shell` component: serves the built browser app from the component's `files` mount
//! (`static/dist` → `/`). Thin glue over [`eve_static`], where every decision lives and is
//! unit-tested: this handler only reads the request, reads files, and writes the response.

use eve_static::{classify, normalize_path, plain_headers, plan_file_response, variants, Target};
use spin_sdk::http::{IncomingRequest, Method, Request, Response, ResponseOutparam};
use spin_sdk::http_component;

/// Where the `files` mount of `spin.toml` puts the build output inside the component.
const MOUNT_ROOT: &str = "/";

/// Answered from the request's head: GET and HEAD have no body to read, and the body of any
/// other method is refused unread (a whole-body handler would buffer whatever a client sends).
#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let head = eve_spin::body::head(&req);
    eve_spin::auth::send_with_cookies(out, serve(&head), &[]).await;
}

fn serve(req: &Request) -> Response {
    let raw_path = eve_spin::spin_header(req, "spin-path-info")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| req.path());
    let path = match normalize_path(raw_path) {
        Ok(path) => path,
        Err(_) => return text(400, "Bad request: invalid path.\n"),
    };
    let target = classify(&path);
    if target == Target::UnknownApi {
        return eve_spin::error(&eve_api::ApiError::not_found(format!(
            "no API route for {path}"
        )));
    }
    let head = match req.method() {
        Method::Get => false,
        Method::Head => true,
        _ => {
            let mut resp = text(405, "Method not allowed.\n");
            resp.set_header("allow", "GET, HEAD");
            return resp;
        }
    };
    let accept_encoding = header(req, "accept-encoding");
    let if_none_match = header(req, "if-none-match");
    let found = match &target {
        Target::AppShell => Some(eve_static::route::INDEX_FILE.to_string()),
        Target::File(file) => Some(file.clone()),
        Target::NotFound | Target::UnknownApi => None,
    };
    if let Some(file) = found {
        if let Some(resp) = serve_file(&file, accept_encoding, if_none_match, 200, head) {
            return resp;
        }
    }
    serve_file(
        eve_static::route::NOT_FOUND_FILE,
        accept_encoding,
        None,
        404,
        head,
    )
    .unwrap_or_else(|| text(404, "Not found.\n"))
}

/// The first readable variant of `file` as a response, or `None` when the file is missing.
fn serve_file(
    file: &str,
    accept_encoding: Option<&str>,
    if_none_match: Option<&str>,
    status: u16,
    head: bool,
) -> Option<Response> {
    variants(file, accept_encoding)
        .into_iter()
        .find_map(|variant| {
            let bytes = std::fs::read(std::path::Path::new(MOUNT_ROOT).join(&variant.file)).ok()?;
            let plan = plan_file_response(file, &variant, &bytes, if_none_match, status);
            let mut builder = Response::builder();
            builder.status(plan.status);
            for (name, value) in &plan.headers {
                builder.header(name.as_str(), value.as_str());
            }
            if plan.body && head {
                builder.header("content-length", bytes.len().to_string());
            }
            let body = if plan.body && !head {
                bytes
            } else {
                Vec::new()
            };
            Some(builder.body(body).build())
        })
}

fn text(status: u16, body: &str) -> Response {
    let mut builder = Response::builder();
    builder.status(status);
    for (name, value) in plain_headers("text/plain; charset=utf-8") {
        builder.header(name, value);
    }
    builder.body(body.to_string()).build()
}

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

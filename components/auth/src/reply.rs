//! A response and the `Set-Cookie` values that go with it.

use eve_api::ApiError;
use serde::Serialize;
use spin_sdk::http::Response;

pub struct Reply {
    pub response: Response,
    pub cookies: Vec<String>,
}

impl Reply {
    pub fn json<T: Serialize>(status: u16, value: &T) -> Self {
        Reply {
            response: eve_spin::json(status, value),
            cookies: Vec::new(),
        }
    }

    /// A status without a body (`204 No Content`).
    pub fn empty(status: u16) -> Self {
        let response = Response::builder()
            .status(status)
            .header("cache-control", "no-store")
            .body(Vec::new())
            .build();
        Reply {
            response,
            cookies: Vec::new(),
        }
    }

    pub fn error(err: &ApiError) -> Self {
        Reply {
            response: eve_spin::error(err),
            cookies: Vec::new(),
        }
    }

    /// An HTML page (for browser navigations that end here).
    pub fn html(status: u16, page: &str) -> Self {
        let response = Response::builder()
            .status(status)
            .header("content-type", "text/html; charset=utf-8")
            .header("cache-control", "no-store")
            .header(
                "content-security-policy",
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            )
            .body(page.as_bytes().to_vec())
            .build();
        Reply {
            response,
            cookies: Vec::new(),
        }
    }

    /// The same reply with `Strict-Transport-Security` added.
    pub fn with_hsts(self, value: &str) -> Self {
        let status = *self.response.status();
        let mut builder = Response::builder();
        builder.status(status);
        for (name, value) in self.response.headers() {
            builder.header(name, String::from_utf8_lossy(value.as_bytes()).into_owned());
        }
        builder.header("strict-transport-security", value);
        let response = builder.body(self.response.into_body()).build();
        Reply {
            response,
            cookies: self.cookies,
        }
    }

    /// A redirect the browser follows with GET (`303 See Other`).
    pub fn redirect(location: &str) -> Self {
        let response = Response::builder()
            .status(303)
            .header("location", location)
            .header("cache-control", "no-store")
            .body(Vec::new())
            .build();
        Reply {
            response,
            cookies: Vec::new(),
        }
    }

    pub fn with_cookie(mut self, cookie: Option<String>) -> Self {
        self.cookies.extend(cookie);
        self
    }
}

impl From<Result<Reply, ApiError>> for Reply {
    fn from(result: Result<Reply, ApiError>) -> Self {
        result.unwrap_or_else(|e| Reply::error(&e))
    }
}

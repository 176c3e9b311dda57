//! The decisions of the `shell` component's static file server, as plain functions over plain
//! values so that they are unit-tested natively (the component itself only reads the request,
//! reads files from its `files` mount and writes the response).
//!
//! - [`route`]: path normalisation (percent-decoding, rejecting `..`) and what a path is: the
//!   app's HTML for a client route, an asset file, or an unknown `/api/*` path.
//! - [`encoding`]: `Accept-Encoding` negotiation over the precompressed `.br` / `.gz` variants
//!   that the web build writes next to each asset.
//! - [`headers`]: content types, cache policy (immutable for fingerprinted assets, `no-cache`
//!   for HTML) and the security headers every response carries.
//! - [`etag`]: strong ETags and `If-None-Match` matching.
//! - [`plan`]: puts them together: which file to read, and the response to build from it.

pub mod encoding;
pub mod etag;
pub mod headers;
pub mod plan;
pub mod route;

pub use encoding::Encoding;
pub use plan::{plain_headers, plan_file_response, variants, FileResponse, Variant};
pub use route::{classify, normalize_path, PathError, Target};

//! eve v1 on the wire, shared by the agent and `eve-proxy`: the routes ([`routes`]), the
//! request bodies and the stream query validated as the reference agent validates them
//! ([`requests`]), every size limit ([`limits`]), eve's error body ([`refusal`]), the upload
//! policy for files in messages ([`uploads`]), NDJSON / SSE framing ([`framing`]) and ids
//! ([`ids`]). Nothing here knows about sessions, models or storage.
//!
//! The items of [`routes`], [`requests`], [`limits`] and [`refusal`] are re-exported here,
//! where the components name them (`protocol::Route`, `protocol::session_request`).

pub mod framing;
pub mod ids;
pub mod limits;
pub mod refusal;
pub mod requests;
pub mod routes;
pub mod uploads;

pub use limits::*;
pub use refusal::Refusal;
pub use requests::*;
pub use routes::*;

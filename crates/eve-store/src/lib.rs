//! The chat store's logic, free of Spin so that it is unit-tested natively:
//!
//! - [`migrations`]: the numbered files of `migrations/`, split into statements and applied
//!   in order, exactly once, safely when instances race; the setup check.
//! - [`persistence`]: every SQL statement as a named constant; [`store`]: the repository that
//!   orders them (over the one-statement-per-call [`sql::Sql`] seam).
//! - [`cursor`], [`time`], [`ids`]: the sidebar cursor `<updatedAt ISO ms>::<id>`, timestamps,
//!   chat ids.
//! - [`validate`], [`limits`]: request input → storable values or a 4xx; every bound.
//! - [`title`], [`pending`], [`transcript`]: fallback titles, the stale-pending rule, search
//!   text and the Markdown export.
//! - [`ratelimit`]: fixed-window arithmetic for `eve_spin::ratelimit`.
//! - [`window`]: which window of a chat's log one answer carries (long chats open at their end).

pub mod cursor;
pub mod ids;
pub mod limits;
pub mod migrations;
pub mod pending;
pub mod persistence;
pub mod ratelimit;
pub mod routes;
pub mod sql;
pub mod store;
pub mod time;
pub mod title;
pub mod transcript;
pub mod validate;
pub mod window;

pub use sql::{Sql, SqlRow, SqlValue};
pub use store::ChatStore;

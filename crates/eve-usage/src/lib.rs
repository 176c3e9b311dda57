//! Model usage, quotas and model access (issue 20, `docs/accounts.md`): recorded by the agent
//! as turns settle, enforced by the agent before a turn starts, read by the admin pages.
//! Plain functions over [`eve_store::sql::Sql`], tested natively; the components only parse
//! requests and reply.
//!
//! - [`persistence`]: every SQL statement, as documented constants.
//! - [`standing`]: what one principal's requests are decided from (role, overrides, today's
//!   tokens, the member models), read in one statement; recording a model call.
//! - [`quota`]: the daily token quota and the storage cap that apply, and the 429.
//! - [`access`]: which models a principal may use, and the admin's setting of them.
//! - [`report`]: the admin's usage views and quota changes.

pub mod access;
pub mod persistence;
pub mod quota;
pub mod report;
pub mod standing;

pub use standing::Standing;

#[cfg(test)]
mod tests;

//! Accounts mode (issue 20, `docs/accounts.md`): who the people of a deployment are, how they
//! get in, and what an admin may change. Plain functions over [`eve_store::sql::Sql`], tested
//! natively; the components only parse requests and reply. Each domain's SQL is one
//! `*_sql` module of documented constants.
//!
//! - [`password`]: argon2id hashing and the one-verify-per-attempt check.
//! - [`accounts`]: creating accounts, signing in, passwords, own settings, OIDC accounts.
//! - [`signup`]: which way in a sign-up takes (setup token, invitation, open domain).
//! - [`invites`], [`resets`]: single-use, expiring invitations and reset links.
//! - [`admin`]: the role check of admin routes, listing, changing, disabling and deleting.
//! - [`audit`]: the audit log.
//! - [`common`]: ids, token hashes, times, email checks.

pub mod accounts;
pub mod accounts_sql;
pub mod admin;
pub mod admin_sql;
pub mod audit;
pub mod common;
pub mod invites;
pub mod invites_sql;
pub mod password;
pub mod resets;
pub mod resets_sql;
pub mod signup;

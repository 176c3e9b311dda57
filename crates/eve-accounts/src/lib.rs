//! Accounts mode (issue 20, `docs/accounts.md`): who the people of a deployment are, how they
//! get in, and what an admin may change. Plain functions over [`eve_store::sql::Sql`], tested
//! natively; the components only parse requests and reply.

pub mod audit;

//! What the store's integration tests share: the one rusqlite adapter of the project.

pub use eve_sql_testing::Db;

//! Whether the stores answer, for `/api/setup`. The schema check (which also applies missing
//! migrations, so a fresh database is ready on first look) is the chat store's
//! `eve_spin::db::schema_status`; the key-value check is `eve_spin::ratelimit::ready`.

use eve_auth::setup::StoreProbe;

/// Probes the SQLite database and the key-value store `default`.
pub fn stores() -> StoreProbe {
    let schema = eve_spin::db::schema_status();
    StoreProbe {
        database_configured: schema.database_ready,
        database_ready: schema.database_ready,
        database_schema_ready: schema.schema_ready,
        rate_limit_ready: eve_spin::ratelimit::ready(),
        // Only accounts mode asks (one indexed read); other modes have no admins.
        admin_exists: !schema.schema_ready
            || eve_spin::auth::config().mode() != eve_api::auth::AuthMode::Accounts
            || admin_exists(),
    }
}

/// Whether accounts mode has an admin; `true` when the database does not answer (setup
/// reports the database then).
fn admin_exists() -> bool {
    eve_spin::db::open()
        .ok()
        .map(|db| eve_accounts::accounts::admin_exists(&db).unwrap_or(true))
        .unwrap_or(true)
}

//! The audit log (`audit_log`, migration 0009): sign-ins and failed sign-ins, admin actions,
//! token creation and revocation. An entry never holds a secret.

use eve_store::sql::{Sql, SqlValue};

/// Appends one entry. `?1` at (Unix ms), `?2` actor, `?3` action, `?4` target, `?5` detail (JSON).
pub const INSERT_AUDIT: &str =
    "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?1, ?2, ?3, ?4, ?5)";

/// One thing that happened, as it is recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry<'a> {
    pub at_ms: i64,
    pub actor: Option<&'a str>,
    pub action: &'a str,
    pub target: Option<&'a str>,
    pub detail: Option<serde_json::Value>,
}

/// Records `entry`. The caller decides whether a failed write fails its request (an admin
/// action should; a failed sign-in's entry must not turn a 401 into a 500).
pub fn record(db: &dyn Sql, entry: &AuditEntry<'_>) -> Result<(), String> {
    db.execute(
        INSERT_AUDIT,
        vec![
            SqlValue::Integer(entry.at_ms),
            SqlValue::opt_text(entry.actor),
            SqlValue::text(entry.action),
            SqlValue::opt_text(entry.target),
            SqlValue::opt_text(entry.detail.as_ref().map(|d| d.to_string())),
        ],
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_sql_testing::Db;

    #[test]
    fn an_entry_is_recorded_with_its_detail_as_json() {
        let db = Db::memory();
        eve_store::migrations::migrate(&db, 0).unwrap();
        record(
            &db,
            &AuditEntry {
                at_ms: 5,
                actor: Some("user:a"),
                action: "invite_created",
                target: None,
                detail: Some(serde_json::json!({"role": "member"})),
            },
        )
        .unwrap();
        let rows = db
            .execute("SELECT at, actor, action, target, detail FROM audit_log", vec![])
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][2], SqlValue::text("invite_created"));
        assert_eq!(rows[0][3], SqlValue::Null);
        assert_eq!(rows[0][4], SqlValue::text(r#"{"role":"member"}"#));
    }
}

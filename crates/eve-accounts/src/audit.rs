//! The audit log (`audit_log`, migration 0009): sign-ins and failed sign-ins, admin actions,
//! token creation and revocation. An entry never holds a secret.

use eve_api::accounts::{AuditEntryView, AuditList};
use eve_api::ApiError;
use eve_store::sql::{Sql, SqlValue};

use crate::common::{int, text};

/// Appends one entry. `?1` at (Unix ms), `?2` actor, `?3` action, `?4` target, `?5` detail (JSON).
pub const INSERT_AUDIT: &str =
    "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?1, ?2, ?3, ?4, ?5)";

/// Newest first: the entries with an id below `?1`, at most `?2`.
pub const LIST_AUDIT: &str = "SELECT id, at, actor, action, target, detail FROM audit_log \
    WHERE id < ?1 ORDER BY id DESC LIMIT ?2";

/// Entries per page of the audit list.
pub const PAGE: i64 = 100;

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

/// Records `entry`, logging (not failing on) a write error: for entries whose request must
/// not fail because the log could not be written (a failed sign-in stays a 401).
pub fn record_best_effort(db: &dyn Sql, entry: &AuditEntry<'_>) {
    if let Err(e) = record(db, entry) {
        eprintln!("audit: cannot record {}: {e}", entry.action);
    }
}

/// `GET /api/admin/audit?cursor=`: a page of entries, newest first; the cursor is the id of
/// the last entry of the previous page.
pub fn list(db: &dyn Sql, cursor: Option<&str>) -> Result<AuditList, ApiError> {
    let before = match cursor.filter(|c| !c.is_empty()) {
        Some(c) => c
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request("malformed cursor"))?,
        None => i64::MAX,
    };
    let rows = db
        .execute(LIST_AUDIT, vec![before.into(), (PAGE + 1).into()])
        .map_err(crate::common::db_error)?;
    let mut entries: Vec<AuditEntryView> = rows
        .iter()
        .map(|r| AuditEntryView {
            id: int(r, 0),
            at: crate::common::iso(int(r, 1)),
            actor: text(r, 2),
            action: text(r, 3).unwrap_or_default(),
            target: text(r, 4),
            detail: text(r, 5).and_then(|d| serde_json::from_str(&d).ok()),
        })
        .collect();
    let more = entries.len() as i64 > PAGE;
    entries.truncate(PAGE as usize);
    Ok(AuditList {
        next_cursor: more
            .then(|| entries.last().map(|e| e.id.to_string()))
            .flatten(),
        entries,
    })
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
            .execute(
                "SELECT at, actor, action, target, detail FROM audit_log",
                vec![],
            )
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][2], SqlValue::text("invite_created"));
        assert_eq!(rows[0][3], SqlValue::Null);
        assert_eq!(rows[0][4], SqlValue::text(r#"{"role":"member"}"#));
    }
}

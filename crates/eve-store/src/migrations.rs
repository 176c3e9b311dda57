//! Schema migrations: the numbered files of `migrations/`, compiled in, applied in order and
//! exactly once per database, recorded in `schema_migrations`.
//!
//! Safe when two instances start together: every statement is idempotent (`IF NOT EXISTS`),
//! the version row is written with `INSERT OR IGNORE` only after all of its statements ran,
//! and an instance that finds a version missing simply runs it again. Spin's SQLite runs one
//! statement per call, so each file is split into statements here ([`split_statements`]).

use crate::sql::{Sql, SqlValue};
use crate::time::Millis;

/// One numbered migration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in version order. A new file gets the next number and a line here.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_chat_and_events",
        sql: include_str!("../../../migrations/0001_chat_and_events.sql"),
    },
    Migration {
        version: 2,
        name: "0002_chat_search",
        sql: include_str!("../../../migrations/0002_chat_search.sql"),
    },
    Migration {
        version: 3,
        name: "0003_eve_agent",
        sql: include_str!("../../../migrations/0003_eve_agent.sql"),
    },
    Migration {
        version: 4,
        name: "0004_chat_events_in_eve",
        sql: include_str!("../../../migrations/0004_chat_events_in_eve.sql"),
    },
    Migration {
        version: 5,
        name: "0005_chat_lifecycle",
        sql: include_str!("../../../migrations/0005_chat_lifecycle.sql"),
    },
    Migration {
        version: 6,
        name: "0006_chat_pin",
        sql: include_str!("../../../migrations/0006_chat_pin.sql"),
    },
    Migration {
        version: 7,
        name: "0007_attachments",
        sql: include_str!("../../../migrations/0007_attachments.sql"),
    },
    Migration {
        version: 8,
        name: "0008_mcp_oauth_client",
        sql: include_str!("../../../migrations/0008_mcp_oauth_client.sql"),
    },
    Migration {
        version: 9,
        name: "0009_accounts",
        sql: include_str!("../../../migrations/0009_accounts.sql"),
    },
    Migration {
        version: 10,
        name: "0010_api_tokens",
        sql: include_str!("../../../migrations/0010_api_tokens.sql"),
    },
    Migration {
        version: 11,
        name: "0011_usage_quotas",
        sql: include_str!("../../../migrations/0011_usage_quotas.sql"),
    },
    Migration {
        version: 12,
        name: "0012_projects",
        sql: include_str!("../../../migrations/0012_projects.sql"),
    },
    Migration {
        version: 13,
        name: "0013_skills",
        sql: include_str!("../../../migrations/0013_skills.sql"),
    },
    Migration {
        version: 14,
        name: "0014_runtime",
        sql: include_str!("../../../migrations/0014_runtime.sql"),
    },
    Migration {
        version: 15,
        name: "0015_slack",
        sql: include_str!("../../../migrations/0015_slack.sql"),
    },
    Migration {
        version: 16,
        name: "0016_slack_card",
        sql: include_str!("../../../migrations/0016_slack_card.sql"),
    },
    Migration {
        version: 17,
        name: "0017_slack_thread_per_person",
        sql: include_str!("../../../migrations/0017_slack_thread_per_person.sql"),
    },
    Migration {
        version: 18,
        name: "0018_chat_event_by_type",
        sql: include_str!("../../../migrations/0018_chat_event_by_type.sql"),
    },
];

/// The bookkeeping table.
pub const CREATE_SCHEMA_MIGRATIONS: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (\
     version INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, applied_at INTEGER NOT NULL)";
pub const SELECT_APPLIED_VERSIONS: &str = "SELECT version FROM schema_migrations ORDER BY version";
pub const RECORD_VERSION: &str =
    "INSERT OR IGNORE INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)";

/// The migrations not yet in `applied`, in order.
pub fn pending_migrations(applied: &[i64]) -> Vec<&'static Migration> {
    MIGRATIONS
        .iter()
        .filter(|m| !applied.contains(&m.version))
        .collect()
}

/// What `/api/setup` reports about the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaStatus {
    /// A connection could be opened and queried.
    pub database_ready: bool,
    /// Every migration is recorded as applied.
    pub schema_ready: bool,
    /// Names of the migrations still missing.
    pub missing: Vec<String>,
    /// The database's message when something failed.
    pub error: Option<String>,
}

/// Errors that mean "this statement already took effect" (a concurrent instance ran it, or a
/// future non-idempotent `ALTER TABLE ... ADD COLUMN` ran before the version row was written).
pub fn is_already_applied_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("duplicate column name") || m.contains("already exists")
}

/// Versions recorded as applied; `Err` when the bookkeeping table is missing or unreadable.
pub fn applied_versions<S: Sql>(db: &S) -> Result<Vec<i64>, String> {
    let rows = db.execute(SELECT_APPLIED_VERSIONS, vec![])?;
    Ok(rows
        .iter()
        .filter_map(|r| r.first().and_then(SqlValue::as_i64))
        .collect())
}

/// Brings the schema up to date. The common case (nothing to do) costs one SELECT.
pub fn migrate<S: Sql>(db: &S, now: Millis) -> Result<(), String> {
    match applied_versions(db) {
        Ok(applied) if pending_migrations(&applied).is_empty() => return Ok(()),
        // A database out of reach (not a missing table): no second wait on it, the request
        // answers 503 at once.
        Err(e) if !crate::sql::is_statement_error(&e) => return Err(e),
        _ => {}
    }
    db.execute(CREATE_SCHEMA_MIGRATIONS, vec![])?;
    let applied = applied_versions(db)?;
    for migration in pending_migrations(&applied) {
        for statement in split_statements(migration.sql) {
            if let Err(e) = db.execute(&statement, vec![]) {
                if !is_already_applied_error(&e) {
                    return Err(format!("migration {} failed: {e}", migration.name));
                }
            }
        }
        db.execute(
            RECORD_VERSION,
            vec![migration.version.into(), migration.name.into(), now.into()],
        )?;
    }
    Ok(())
}

/// Applies what is missing, then reports (the setup check: a fresh database becomes ready on
/// the first look instead of waiting for the first chat request).
pub fn migrate_and_report<S: Sql>(db: &S, now: Millis) -> SchemaStatus {
    let migrated = migrate(db, now);
    let mut status = report(db);
    if let Err(e) = migrated {
        status.error = Some(e);
    }
    status
}

/// Reports the schema without changing it.
pub fn report<S: Sql>(db: &S) -> SchemaStatus {
    match applied_versions(db) {
        Ok(applied) => {
            let missing: Vec<String> = pending_migrations(&applied)
                .iter()
                .map(|m| m.name.to_string())
                .collect();
            SchemaStatus {
                database_ready: true,
                schema_ready: missing.is_empty(),
                missing,
                error: None,
            }
        }
        Err(e) => {
            // No bookkeeping table: a fresh database if a trivial query works.
            let database_ready = db.execute("SELECT 1", vec![]).is_ok();
            SchemaStatus {
                database_ready,
                schema_ready: false,
                missing: MIGRATIONS.iter().map(|m| m.name.to_string()).collect(),
                error: Some(e),
            }
        }
    }
}

/// Splits SQL text into statements on `;`, ignoring `;` inside quotes ('…', "…", `…`, […])
/// and comments, and dropping the comments. Triggers (whose bodies hold `;`) are not supported
/// in migration files (a test checks none is used).
pub fn split_statements(sql: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                current.push(c);
                for d in chars.by_ref() {
                    current.push(d);
                    // A doubled quote inside a string is an escaped quote: the loop sees it as
                    // close-then-open, which keeps the state right.
                    if d == close {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                current.push('\n');
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                current.push(' ');
            }
            ';' if inside_trigger_body(&current) => current.push(c),
            ';' => {
                push_statement(&mut statements, &current);
                current.clear();
            }
            _ => current.push(c),
        }
    }
    push_statement(&mut statements, &current);
    statements
}

/// A `CREATE TRIGGER … BEGIN … END` holds `;`-terminated statements: the trigger ends at the
/// first `;` after its closing `END` (comments and strings are already folded out of `text`).
fn inside_trigger_body(text: &str) -> bool {
    let upper = text.trim().to_ascii_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    let is_trigger = matches!(
        words.as_slice(),
        ["CREATE", "TRIGGER", ..] | ["CREATE", "TEMP" | "TEMPORARY", "TRIGGER", ..]
    );
    is_trigger && words.last() != Some(&"END")
}

fn push_statement(statements: &mut Vec<String>, text: &str) {
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        statements.push(trimmed.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn migration_statements_are_idempotent() {
        for m in MIGRATIONS {
            for s in split_statements(m.sql) {
                let upper = s.to_ascii_uppercase();
                if upper.starts_with("CREATE") {
                    assert!(upper.contains("IF NOT EXISTS"), "{}: {s}", m.name);
                }
            }
        }
    }

    #[test]
    fn split_handles_quotes_and_comments() {
        let sql = "-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT 'a;b');\n\
                   /* block; comment */ INSERT INTO a VALUES ('it''s; fine');  ;\n\
                   SELECT \"we;ird\" FROM [t;x]";
        let parts = split_statements(sql);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[0], "CREATE TABLE a (x TEXT DEFAULT 'a;b')");
        assert_eq!(parts[1], "INSERT INTO a VALUES ('it''s; fine')");
        assert_eq!(parts[2], "SELECT \"we;ird\" FROM [t;x]");
    }

    #[test]
    fn a_trigger_body_stays_one_statement() {
        let sql = "CREATE TABLE IF NOT EXISTS a (x);\n\
                   CREATE TRIGGER IF NOT EXISTS t AFTER DELETE ON a BEGIN\n\
                   DELETE FROM b WHERE y = OLD.x; -- ; in a comment\n\
                   INSERT INTO c VALUES ('end;'); END;\n\
                   create temp trigger u after insert on a begin select 1; end ;\n\
                   SELECT 2";
        let parts = split_statements(sql);
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert!(parts[1].starts_with("CREATE TRIGGER") && parts[1].ends_with("END"));
        assert!(parts[1].contains("OLD.x;") && parts[1].contains("'end;');"));
        assert!(parts[2].ends_with("end"));
        assert_eq!(parts[3], "SELECT 2");
    }

    #[test]
    fn pending_migrations_are_the_missing_ones_in_order() {
        assert_eq!(pending_migrations(&[]).len(), MIGRATIONS.len());
        assert!(
            pending_migrations(&MIGRATIONS.iter().map(|m| m.version).collect::<Vec<_>>())
                .is_empty()
        );
        let rest = pending_migrations(&[1]);
        assert_eq!(rest.first().map(|m| m.version), Some(2));
    }

    #[test]
    fn duplicate_column_and_already_exists_count_as_applied() {
        assert!(is_already_applied_error(
            "duplicate column name: search_text"
        ));
        assert!(is_already_applied_error("table chat already exists"));
        assert!(!is_already_applied_error("no such table: chat"));
    }
}

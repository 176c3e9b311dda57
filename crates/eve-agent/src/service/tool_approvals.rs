//! Where the owner's tool approval policies come from (docs/approvals.md): the system setting
//! `toolApprovals` (table `system_setting`, migration 0014) when its row exists, else the Spin
//! variable `tool_approvals`; both `{"<tool name>": "never"|"once"|"always"}`. A value that
//! does not parse is logged and sets nothing, so every tool keeps its default.

use eve_store::sql::Sql;

use crate::service::env::AgentEnv;
use crate::turn::approvals::Policies;

/// The `system_setting` key of the policies.
pub const SETTING_KEY: &str = "toolApprovals";

/// The Spin variable read while the setting has no row.
pub const VARIABLE: &str = "tool_approvals";

/// The policies in force ([`eve_runtime::settings::tool_approvals`]). A database that cannot
/// be read falls back to the variable: a turn is not stopped for it, and the variable is the
/// owner's bootstrap.
pub fn policies<S: Sql>(db: &S, env: &dyn AgentEnv) -> Policies {
    let variable = env.variable(VARIABLE);
    eve_runtime::settings::tool_approvals(db, variable.as_deref()).unwrap_or_else(|e| {
        eprintln!("agent: reading the {SETTING_KEY} setting: {}", e.message);
        eve_runtime::settings::bootstrap_approvals(variable.as_deref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::tests::configured;
    use crate::session::store::testing::Lite;
    use crate::turn::approvals::Policy;
    use eve_store::sql::SqlValue;

    fn db() -> Lite {
        let db = Lite::memory();
        eve_store::migrations::migrate(&db, 0).unwrap();
        db
    }

    #[test]
    fn the_setting_row_wins_over_the_variable_which_applies_without_it() {
        let db = db();
        let env = configured(&[("tool_approvals", r#"{"get_time":"once"}"#)]);
        assert_eq!(policies(&db, &env).get("get_time"), Some(&Policy::Once));
        db.execute(
            "INSERT INTO system_setting (key, value, updated_at) VALUES (?1, ?2, 1)",
            vec![
                SqlValue::Text(SETTING_KEY.into()),
                SqlValue::Text(r#"{"get_time":"always"}"#.into()),
            ],
        )
        .unwrap();
        assert_eq!(policies(&db, &env).get("get_time"), Some(&Policy::Always));
    }

    #[test]
    fn a_value_that_does_not_parse_sets_nothing() {
        let env = configured(&[("tool_approvals", "not json")]);
        assert!(policies(&db(), &env).is_empty());
    }
}

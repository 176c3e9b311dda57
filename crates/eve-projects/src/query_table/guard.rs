//! What makes the model's SQL safe to run on the app's own database: it is parsed (SQLite's
//! dialect), must be ONE query (`SELECT`, `WITH … SELECT`, `VALUES`), and is rewritten before
//! it runs so that every table it names — and every `WITH` name it defines — gets the prefix
//! [`PREFIX`]. Only the tables `query_table` loaded (bound `WITH` entries of that prefix) can
//! then be read: a real table (`chat_event`), SQLite's own (`sqlite_schema`) or a table-valued
//! function (`pragma_table_list`) becomes a name nothing defines, and the query fails with
//! "no such table". What runs is the rewritten AST as sqlparser prints it, never the model's
//! text, so nothing in the text can hide from the check (a comment, a quote, a second
//! statement). No migration names a table with a `:`, so the prefix can never meet one.
//!
//! Recursive `WITH` queries are refused (they can run forever, and Spin's SQLite interface
//! has no statement timeout), as is a query whose tables, multiplied, exceed
//! [`MAX_COMBINED_ROWS`] rows (an accidental cross join).

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_relations, Ident, ObjectName, ObjectNamePart, Query, Statement, TableAlias, TableFactor,
    Visit, VisitMut, Visitor, VisitorMut,
};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// What every table name in a query that runs starts with.
pub const PREFIX: &str = "scratch:";
/// The longest SQL accepted.
pub const MAX_SQL_CHARS: usize = 20_000;
/// How deeply expressions and subqueries may nest (sqlparser's own guard).
const MAX_DEPTH: usize = 40;
/// The most rows the tables of one query may make when multiplied: every table named in the
/// query counts its rows (a `WITH` name counts 1: its own tables are counted where it reads
/// them). An estimate, meant to stop an accidental cross join of two large sheets.
pub const MAX_COMBINED_ROWS: f64 = 1e8;

/// A loaded table's name as the query that runs names it.
pub fn scratch_name(name: &str) -> String {
    format!("{PREFIX}{}", name.to_ascii_lowercase())
}

fn quoted(name: &str) -> Ident {
    Ident::with_quote('"', scratch_name(name))
}

/// The model's `sql`, checked and rewritten; `rows` are the loaded tables' row counts by
/// name (lower case). The error is a sentence for the model.
pub fn check(sql: &str, rows: &BTreeMap<String, usize>) -> Result<String, String> {
    if sql.chars().count() > MAX_SQL_CHARS {
        return Err(format!("the SQL is longer than {MAX_SQL_CHARS} characters"));
    }
    let mut statements = Parser::new(&SQLiteDialect {})
        .with_recursion_limit(MAX_DEPTH)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| format!("the SQL cannot be parsed: {e}"))?;
    let mut query = match statements.as_mut_slice() {
        [Statement::Query(q)] => q.clone(),
        _ => return Err(ONE_QUERY.into()),
    };
    if let ControlFlow::Break(e) = Visit::visit(&*query, &mut ReadOnly) {
        return Err(e);
    }
    let mut rewrite = Rewrite {
        rows,
        combined: 1.0,
    };
    if let ControlFlow::Break(e) = VisitMut::visit(&mut *query, &mut rewrite) {
        return Err(e);
    }
    if rewrite.combined > MAX_COMBINED_ROWS {
        return Err(format!(
            "the query's tables together make up to {:.0} rows (more than {MAX_COMBINED_ROWS:.0}): join them on a condition in fewer steps, or filter each first",
            rewrite.combined
        ));
    }
    Ok(query.to_string())
}

const ONE_QUERY: &str =
    "sql must be exactly one read-only query: SELECT … or WITH … SELECT … (no INSERT, UPDATE, DELETE, CREATE, PRAGMA or a second statement)";

/// Refuses statements nested in the query (a data-modifying `WITH`) and recursive `WITH`s.
struct ReadOnly;

impl Visitor for ReadOnly {
    type Break = String;

    fn pre_visit_statement(&mut self, _: &Statement) -> ControlFlow<String> {
        ControlFlow::Break(ONE_QUERY.into())
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        for cte in query.with.iter().flat_map(|w| &w.cte_tables) {
            let own = cte.alias.name.value.to_ascii_lowercase();
            visit_relations(&*cte.query, |name| match last_ident(name) {
                Some(n) if n.value.to_ascii_lowercase() == own => ControlFlow::Break(format!(
                    "{own} refers to itself: recursive queries are not run here"
                )),
                _ => ControlFlow::Continue(()),
            })?;
        }
        ControlFlow::Continue(())
    }
}

fn last_ident(name: &ObjectName) -> Option<&Ident> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => Some(i),
        _ => None,
    }
}

/// Gives every table and `WITH` name the prefix (keeping the name the query uses as the
/// table's alias, so `bank.amount` still works) and counts the combined rows.
struct Rewrite<'a> {
    rows: &'a BTreeMap<String, usize>,
    combined: f64,
}

impl VisitorMut for Rewrite<'_> {
    type Break = String;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<String> {
        for cte in query.with.iter_mut().flat_map(|w| &mut w.cte_tables) {
            cte.alias.name = quoted(&cte.alias.name.value);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<String> {
        match factor {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                let ident = match name.0.as_slice() {
                    [ObjectNamePart::Identifier(i)] => i.clone(),
                    _ => {
                        return ControlFlow::Break(format!(
                            "{name}: name a loaded table or a WITH name, without a schema"
                        ))
                    }
                };
                if args.is_some() {
                    return ControlFlow::Break(format!(
                        "{name}(…): table-valued functions are not available here"
                    ));
                }
                let loaded = self.rows.get(&ident.value.to_ascii_lowercase());
                self.combined *= loaded.copied().unwrap_or(1).max(1) as f64;
                *name = ObjectName(vec![ObjectNamePart::Identifier(quoted(&ident.value))]);
                if alias.is_none() {
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: ident,
                        columns: Vec::new(),
                        at: None,
                    });
                }
                ControlFlow::Continue(())
            }
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => {
                ControlFlow::Continue(())
            }
            other => ControlFlow::Break(format!(
                "{other}: only loaded tables, WITH names and subqueries can follow FROM or JOIN"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> BTreeMap<String, usize> {
        BTreeMap::from([("bank".to_string(), 10), ("ledger".to_string(), 20)])
    }

    #[test]
    fn tables_and_with_names_get_the_prefix_and_keep_their_names_as_aliases() {
        let sql = check(
            "WITH m AS (SELECT ref FROM Bank) SELECT b.ref, l.amount FROM bank b JOIN ledger AS l ON l.ref = b.ref WHERE b.ref IN (SELECT ref FROM m)",
            &rows(),
        )
        .unwrap();
        assert_eq!(
            sql,
            "WITH \"scratch:m\" AS (SELECT ref FROM \"scratch:bank\" AS Bank) SELECT b.ref, l.amount FROM \"scratch:bank\" b JOIN \"scratch:ledger\" AS l ON l.ref = b.ref WHERE b.ref IN (SELECT ref FROM \"scratch:m\" AS m)"
        );
    }

    #[test]
    fn only_one_read_only_query_passes() {
        for sql in [
            "DELETE FROM bank",
            "SELECT 1; DELETE FROM bank",
            "INSERT INTO bank VALUES (1)",
            "CREATE TABLE x (a)",
            "PRAGMA table_info(bank)",
            "ATTACH 'x.db' AS x",
            "UPDATE bank SET amount = 0",
            "DROP TABLE bank",
            "VACUUM",
        ] {
            assert!(check(sql, &rows()).is_err(), "{sql}");
        }
    }

    #[test]
    fn schemas_functions_and_recursion_are_refused() {
        for (sql, why) in [
            ("SELECT * FROM main.chat_event", "without a schema"),
            ("SELECT * FROM pragma_table_list()", "table-valued"),
            ("SELECT * FROM json_each('[1]')", "table-valued"),
            (
                "WITH r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
                "recursive",
            ),
        ] {
            let e = check(sql, &rows()).unwrap_err();
            assert!(e.contains(why), "{sql}: {e}");
        }
    }

    #[test]
    fn a_cross_join_of_large_tables_is_refused() {
        let big = BTreeMap::from([("a".to_string(), 10_000), ("b".to_string(), 10_000)]);
        assert!(check("SELECT count(*) FROM a JOIN b ON a.x = b.x", &big).is_ok());
        let e = check("SELECT count(*) FROM a, b, a AS c", &big).unwrap_err();
        assert!(e.contains("make up to"), "{e}");
    }
}

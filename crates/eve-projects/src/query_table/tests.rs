//! `query_table` on real SQLite (every migration applied, the app's tables beside it): the
//! worked reconciliation, and what the model's SQL cannot reach or change.

use eve_documents::kinds::{DOCX, XLSX};
use eve_documents::testing::{self, bank_statement_xlsx, LEDGER_CSV, MISMATCHES_SQL, TOTALS_SQL};
use eve_sql_testing::Db;
use eve_store::sql::Sql;
use serde_json::{json, Value};

use crate::files::{self, NewFile};
use crate::{project_scope, projects};

fn project() -> (Db, String) {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    projects::create(&db, "alice", "prj_1", "Books", "", 1).unwrap();
    let s = project_scope("prj_1");
    for (id, name, media, data) in [
        ("file_1", "bank.xlsx", XLSX, bank_statement_xlsx()),
        (
            "file_2",
            "ledger.csv",
            "text/csv",
            LEDGER_CSV.as_bytes().to_vec(),
        ),
        ("file_3", "policy.docx", DOCX, testing::docx("<w:p/>")),
    ] {
        let new = NewFile {
            principal: "alice",
            scope: &s,
            id,
            name,
            media_type: media,
            data,
            now: 1,
            default_max: u64::MAX,
        };
        files::upload(&db, "/u", new).unwrap();
    }
    (db, s)
}

fn both(sql: &str) -> Value {
    json!({"tables": [
        {"name": "bank", "file": "/workspace/bank.xlsx", "sheet": "March"},
        {"name": "ledger", "file": "ledger.csv"}], "sql": sql})
}

#[test]
fn the_reconciliation_finds_every_mismatch_and_both_totals_exactly() {
    let (db, s) = project();
    let (out, err) = super::run(&db, "alice", &s, &both(MISMATCHES_SQL));
    assert!(!err, "{out}");
    assert_eq!(
        out["columns"],
        json!(["reference", "bank", "ledger", "difference"])
    );
    assert_eq!(
        out["rows"],
        json!([
            ["CHQ-5120", null, -320.0, 320.0],
            ["FEE-03", -12.5, null, -12.5],
            ["INV-1003", 1205.0, 1250.0, -45.0]
        ])
    );
    assert_eq!(out["truncated"], false);
    assert_eq!(
        out["tables"][0],
        json!({"name": "bank", "file": "/workspace/bank.xlsx", "sheet": "March",
               "columns": ["date", "reference", "description", "amount"], "rows": 5})
    );
    let (out, _) = super::run(&db, "alice", &s, &both(TOTALS_SQL));
    assert_eq!(out["rows"], json!([[1922.9, 1660.4]]));
}

#[test]
fn the_query_reads_only_what_it_loaded_and_changes_nothing() {
    let (db, s) = project();
    let before = db
        .execute("SELECT count(*) FROM project_file", vec![])
        .unwrap();
    for sql in [
        "SELECT * FROM project_file",
        "SELECT * FROM bank, project_file",
        "SELECT name FROM sqlite_schema",
        "SELECT * FROM \"project_file\"",
        "SELECT * FROM [project_file]",
        "SELECT * FROM bank, (WITH project_file AS (SELECT 1 AS x) SELECT x FROM project_file) q, project_file",
        "SELECT * FROM bank WHERE reference IN (SELECT name FROM project_file)",
        "DELETE FROM project_file",
        "SELECT 1; DELETE FROM project_file",
        "SELECT * FROM main.project_file",
    ] {
        let (out, err) = super::run(&db, "alice", &s, &both(sql));
        assert!(err, "{sql}: {out}");
        assert!(!out.to_string().contains("bank.xlsx\",\"media"), "{sql}: {out}");
    }
    let after = db
        .execute("SELECT count(*) FROM project_file", vec![])
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn bad_input_is_a_tool_error_the_model_can_act_on() {
    let (db, s) = project();
    let table = |name: &str, file: &str, sheet: Option<&str>| json!({"tables": [{"name": name, "file": file, "sheet": sheet}], "sql": "SELECT 1"});
    for (input, says) in [
        (json!({"sql": "SELECT 1"}), "missing field `tables`"),
        (json!({"tables": [], "sql": "SELECT 1"}), "1 to 8 tables"),
        (table("1x", "bank.xlsx", None), "is not a table name"),
        (
            table("t", "missing.csv", None),
            "File not found: /workspace/missing.csv",
        ),
        (table("t", "bank.xlsx", Some("April")), "no sheet \"April\""),
        (
            table("t", "policy.docx", None),
            "not a spreadsheet or a CSV file",
        ),
        (
            json!({"tables": [{"name": "t", "file": "ledger.csv"}], "sql": "SELECT nope FROM t"}),
            "no such column",
        ),
        (
            json!({"tables": [{"name": "t", "file": "ledger.csv"}, {"name": "T", "file": "ledger.csv"}], "sql": "SELECT 1"}),
            "two tables are named T",
        ),
    ] {
        let (out, err) = super::run(&db, "alice", &s, &input);
        assert!(err, "{input}: {out}");
        let e = out["error"].as_str().unwrap();
        assert!(e.contains(says), "{input}: {e}");
    }
    // Another principal's files are not found.
    let (out, err) = super::run(&db, "bob", &s, &both(TOTALS_SQL));
    assert!(
        err && out["error"].as_str().unwrap().contains("File not found"),
        "{out}"
    );
}

#[test]
fn header_names_become_sql_column_names() {
    let h = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        super::column_names(&h(&[
            "Posted Date",
            "Amount (€)",
            "",
            "2024",
            "amount",
            "Amount"
        ])),
        [
            "posted_date",
            "amount",
            "column_3",
            "c_2024",
            "amount_2",
            "amount_3"
        ]
    );
}

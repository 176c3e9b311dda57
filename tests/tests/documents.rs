//! Documents the agent can work on (issue 33, docs/projects.md "Documents"), through the real
//! components in the local host with real SQLite and the demo model's scripted tool calls
//! (`call tool NAME {json}`): a workbook, a Word document and a PDF — real files written by
//! libraries — uploaded to a project under the default upload policy, read back with
//! `read_file`, and the worked reconciliation: March's bank statement (xlsx) against the
//! ledger (CSV) with `query_table`, finding every deliberate mismatch and both totals exactly.

use std::time::Duration;

use eve_chat_tests::accounts::*;
use eve_chat_tests::eve::{history_as, of_type, parse_ndjson};
use eve_chat_tests::Host;
use eve_documents::kinds::{DOCX, PDF, XLSX};
use eve_documents::testing::{
    self, docx_paragraph, docx_table, LEDGER_CSV, MISMATCHES_SQL, TOTALS_SQL,
};
use serde_json::{json, Value};

const SETTLE: Duration = Duration::from_secs(60);

/// The output of the one tool call the demo model makes for `message`, in a new session of
/// `chat`.
fn tool_output(h: &Host, u: &User, chat: &str, message: String) -> Value {
    let body = json!({"message": message, "chatId": chat});
    let sid = settled_session(h, u, &body, SETTLE);
    let events = parse_ndjson(&history_as(h, &sid, &u.headers()).text());
    let results = of_type(&events, "action.result");
    assert_eq!(results.len(), 1, "{events:?}");
    results[0]["data"]["result"]["output"].clone()
}

fn call_tool(name: &str, input: Value) -> String {
    format!("call tool {name} {input}")
}

#[test]
fn office_files_upload_by_default_and_read_back_as_text_and_the_reconciliation_is_exact() {
    let Some(h) = host(&[]) else { return };
    let alice = signed_up(
        &h,
        json!({"email": "alice@open.example", "password": PASSWORD}),
    );
    let p = new_project(&h, &alice, "March close", "");
    let policy = [
        docx_paragraph(Some("Heading1"), "Reconciliation policy"),
        docx_paragraph(None, "Differences over 10 EUR are escalated."),
        docx_table(&[&["Account", "Owner"], &["Current", "Finance"]]),
    ]
    .concat();
    let uploads = [
        ("bank.xlsx", XLSX, testing::bank_statement_xlsx()),
        ("ledger.csv", "text/csv", LEDGER_CSV.as_bytes().to_vec()),
        ("policy.docx", DOCX, testing::docx(&policy)),
        (
            "statement.pdf",
            PDF,
            testing::pdf(&[&["Statement of account", "Closing balance 1922.90"]]),
        ),
    ];
    for (name, media, bytes) in &uploads {
        ok(upload(&h, &alice, &p, name, media, bytes), 201);
    }
    let chat = new_chat(&h, &alice, Some(&p));

    let read = |file: &str| {
        let out = tool_output(
            &h,
            &alice,
            &chat,
            call_tool(
                "read_file",
                json!({"filePath": format!("/workspace/{file}")}),
            ),
        );
        out["content"]
            .as_str()
            .unwrap_or_else(|| panic!("{out}"))
            .to_string()
    };
    let book = read("bank.xlsx");
    assert!(
        book.contains("1: # Workbook: 2 sheets (\"March\", \"Summary\")"),
        "{book}"
    );
    assert!(
        book.contains("| Date | Reference | Description | Amount |"),
        "{book}"
    );
    assert!(
        book.contains("| 2024-03-12 | INV-1003 | Client C | 1205 |"),
        "{book}"
    );
    let doc = read("policy.docx");
    assert!(doc.starts_with("1: # Reconciliation policy\n"), "{doc}");
    assert!(doc.contains(": | Current | Finance |"), "{doc}");
    let pdf = read("statement.pdf");
    assert!(pdf.contains("Closing balance 1922.90"), "{pdf}");

    let tables = json!([
        {"name": "bank", "file": "/workspace/bank.xlsx", "sheet": "March"},
        {"name": "ledger", "file": "/workspace/ledger.csv"}]);
    let query = |sql: &str| {
        tool_output(
            &h,
            &alice,
            &chat,
            call_tool("query_table", json!({"tables": tables, "sql": sql})),
        )
    };
    let out = query(MISMATCHES_SQL);
    assert_eq!(
        out["columns"],
        json!(["reference", "bank", "ledger", "difference"]),
        "{out}"
    );
    assert_eq!(
        out["rows"],
        json!([
            ["CHQ-5120", null, -320.0, 320.0],
            ["FEE-03", -12.5, null, -12.5],
            ["INV-1003", 1205.0, 1250.0, -45.0]
        ])
    );
    assert_eq!(query(TOTALS_SQL)["rows"], json!([[1922.9, 1660.4]]));

    // The model's SQL reads only what it loaded: the app's tables are not there.
    let out = query("SELECT * FROM project_file");
    assert!(
        out["error"].as_str().unwrap().contains("no such table"),
        "{out}"
    );
}

//! `query_table {tables: [{name, file, sheet?}], sql}`: the agent loads sheets of its
//! workbooks and CSV files as tables for one call and runs one read-only SQL query over them
//! on SQLite — joins across two statements, sums, the rows that do not match — so that a
//! reconciliation is exact arithmetic rather than the model adding numbers up.
//!
//! The query runs on the app's database, made safe by [`guard`] (it can read only the tables
//! it loaded) and shaped by [`sql`] (one statement, nothing created or left behind). Columns
//! are named from the header row ([`column_names`]); the answer gives the columns, at most
//! [`MAX_RESULT_ROWS`] rows, and what was loaded. A large answer becomes a temp file like any
//! tool output over 100 KB (the turn does that).

pub mod guard;
pub mod sql;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use eve_documents::{Cell, Table};
use eve_store::sql::{Sql, SqlValue};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{files, names};

/// The tool's name.
pub const NAME: &str = "query_table";
/// The most tables one call loads, and rows one table may have.
pub const MAX_TABLES: usize = 8;
pub const MAX_TABLE_ROWS: usize = 10_000;
/// The most rows, and bytes of rows, an answer carries (then `truncated`).
pub const MAX_RESULT_ROWS: usize = 1_000;
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;
/// The longest text of one result cell.
pub const MAX_CELL_CHARS: usize = 2_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    tables: Vec<TableInput>,
    sql: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableInput {
    name: String,
    file: String,
    sheet: Option<String>,
}

/// The spec offered to the model.
pub fn spec() -> (String, String, Value) {
    (
        NAME.into(),
        "Loads sheets of spreadsheets (xlsx, xls, ods) or CSV files as SQL tables for this call and runs ONE read-only SQLite query over them (SELECT or WITH … SELECT): joins, sums, differences, rows without a match. Columns are named from each table's header row in lower case with _ for other characters (\"Posted Date\" → posted_date); the answer lists them. Numbers are numbers (use round(x, 2) on sums of money); dates are ISO text. Use it for any arithmetic over a table instead of adding numbers yourself.".into(),
        json!({"type":"object","properties":{
            "tables":{"type":"array","minItems":1,"maxItems":MAX_TABLES,"items":{"type":"object","properties":{
                "name":{"type":"string","pattern":"^[A-Za-z_][A-Za-z0-9_]{0,62}$","description":"The table's name in the SQL."},
                "file":{"type":"string","description":"/workspace/<name> of a spreadsheet or CSV file (glob lists them)."},
                "sheet":{"type":"string","description":"The sheet to load; defaults to the first."}},
                "required":["name","file"],"additionalProperties":false}},
            "sql":{"type":"string","description":"One SQLite SELECT (or WITH … SELECT) over the tables."}},
            "required":["tables","sql"],"additionalProperties":false}),
    )
}

/// SQL column names for a header: lower case, `_` for anything not a letter or digit,
/// `column_<n>` for an empty one, `c_` before a leading digit, `_2`, `_3`… for repeats.
pub fn column_names(headers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        let mut name = String::new();
        for c in h.trim().to_lowercase().chars() {
            if c.is_alphanumeric() {
                name.push(c);
            } else if !name.ends_with('_') {
                name.push('_');
            }
        }
        let mut name = name.trim_matches('_').to_string();
        if name.is_empty() {
            name = format!("column_{}", i + 1);
        } else if name.starts_with(|c: char| c.is_ascii_digit()) {
            name = format!("c_{name}");
        }
        let base = name.clone();
        let mut n = 2;
        while out.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        out.push(name);
    }
    out
}

fn error(message: impl Into<String>) -> (Value, bool) {
    (json!({ "error": message.into() }), true)
}

fn cell_json(c: &Cell) -> Value {
    match c {
        Cell::Empty => Value::Null,
        Cell::Int(i) => json!(i),
        Cell::Float(f) => json!(f),
        Cell::Bool(b) => json!(b),
        Cell::Text(t) => json!(t),
    }
}

fn result_json(v: SqlValue) -> Value {
    match v {
        SqlValue::Integer(i) => json!(i),
        SqlValue::Real(f) => json!(f),
        SqlValue::Text(t) if t.chars().count() > MAX_CELL_CHARS => {
            json!(format!(
                "{}…",
                t.chars().take(MAX_CELL_CHARS).collect::<String>()
            ))
        }
        SqlValue::Text(t) => json!(t),
        SqlValue::Blob(b) => json!(format!("({} bytes)", b.len())),
        SqlValue::Null => Value::Null,
    }
}

/// One table to load: its name, what the answer says of it, and its rows as a JSON array.
struct Loaded {
    name: String,
    columns: Vec<String>,
    described: Value,
    rows: usize,
    data: String,
}

fn load<S: Sql>(db: &S, principal: &str, scope: &str, t: &TableInput) -> Result<Loaded, String> {
    let valid = t.name.len() <= 63
        && t.name
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && t.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "{:?} is not a table name: use letters, digits and _ (not first a digit)",
            t.name
        ));
    }
    let file_name = names::from_tool_path(&t.file)?;
    let path = names::tool_path(&file_name);
    let file = files::read_by_name(db, principal, scope, &file_name)
        .map_err(|e| format!("the files are unavailable: {e}"))?
        .ok_or_else(|| format!("File not found: {path}"))?;
    let table: Table =
        eve_documents::table_of(&file.media_type, &file_name, &file.data, t.sheet.as_deref())
            .map_err(|e| format!("{path}: {e}"))?;
    if table.headers.is_empty() {
        return Err(format!("{path}: the table is empty"));
    }
    if table.rows.len() > MAX_TABLE_ROWS {
        return Err(format!(
            "{path}: {} rows, more than the {MAX_TABLE_ROWS} one table may have here",
            table.rows.len()
        ));
    }
    let columns = column_names(&table.headers);
    let rows: Vec<Value> = table
        .rows
        .iter()
        .map(|r| Value::Array(r.iter().map(cell_json).collect()))
        .collect();
    let mut described =
        json!({"name": t.name, "file": path, "columns": columns, "rows": rows.len()});
    if eve_documents::Kind::of(&file.media_type, &file_name)
        == Some(eve_documents::Kind::Spreadsheet)
    {
        described["sheet"] = json!(table.name);
    }
    Ok(Loaded {
        name: t.name.to_ascii_lowercase(),
        columns,
        described,
        rows: rows.len(),
        data: Value::Array(rows).to_string(),
    })
}

/// Runs `query_table` with `input` over the files of `scope` (the principal's).
pub fn run<S: Sql>(db: &S, principal: &str, scope: &str, input: &Value) -> (Value, bool) {
    let input: Input = match serde_json::from_value(input.clone()) {
        Ok(i) => i,
        Err(e) => return error(format!("query_table's input: {e}")),
    };
    if input.tables.is_empty() || input.tables.len() > MAX_TABLES {
        return error(format!("tables: name 1 to {MAX_TABLES} tables to load"));
    }
    let mut loaded: Vec<Loaded> = Vec::new();
    for t in &input.tables {
        match load(db, principal, scope, t) {
            Ok(l) if loaded.iter().any(|o| o.name == l.name) => {
                return error(format!("two tables are named {}", t.name))
            }
            Ok(l) => loaded.push(l),
            Err(e) => return error(e),
        }
    }
    let rows: BTreeMap<String, usize> = loaded.iter().map(|l| (l.name.clone(), l.rows)).collect();
    let query = match guard::check(&input.sql, &rows) {
        Ok(q) => q,
        Err(e) => return error(e),
    };
    let entries: Vec<String> = loaded
        .iter()
        .enumerate()
        .map(|(i, l)| sql::table_entry(&guard::scratch_name(&l.name), &l.columns, i + 1))
        .collect();
    let statement = sql::statement(&entries, &query, MAX_RESULT_ROWS + 1);
    let params = loaded
        .iter()
        .map(|l| SqlValue::text(l.data.clone()))
        .collect();
    let (columns, result) = match db.execute_with_columns(&statement, params) {
        Ok(r) => r,
        Err(e) => return error(format!("the query failed: {e}")),
    };
    answer(
        columns,
        result,
        loaded.into_iter().map(|l| l.described).collect(),
    )
}

/// The answer: the result's columns and rows within the bounds, and the tables loaded.
fn answer(columns: Vec<String>, result: Vec<Vec<SqlValue>>, tables: Vec<Value>) -> (Value, bool) {
    let total = result.len();
    let (mut rows, mut bytes) = (Vec::new(), 0usize);
    for row in result.into_iter().take(MAX_RESULT_ROWS) {
        let row = Value::Array(row.into_iter().map(result_json).collect());
        bytes += row.to_string().len();
        if bytes > MAX_RESULT_BYTES {
            break;
        }
        rows.push(row);
    }
    let truncated = rows.len() < total;
    (
        json!({"columns": columns, "rows": rows, "rowCount": rows.len(), "truncated": truncated, "tables": tables}),
        false,
    )
}

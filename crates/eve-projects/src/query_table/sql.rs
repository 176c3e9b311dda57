//! The one statement `query_table` runs: the loaded tables as `WITH` entries over JSON arrays
//! bound as parameters (one array of rows per table), then the model's checked query. Nothing
//! is created, so nothing is left behind, and one statement behaves the same on a local
//! SQLite file and on a remote libSQL server (where a TEMP table would live only as long as
//! the server's stream).

/// One loaded table: `"scratch:<name>"(<columns>)` read out of the JSON array of rows bound as
/// `?<param>` (`json_extract` keeps numbers numeric, text text, `null` NULL).
pub fn table_entry(name: &str, columns: &[String], param: usize) -> String {
    let cols: Vec<String> = columns.iter().map(|c| quote(c)).collect();
    let values: Vec<String> = (0..columns.len())
        .map(|i| format!("json_extract(value, '$[{i}]')"))
        .collect();
    format!(
        "{}({}) AS (SELECT {} FROM json_each(?{param}))",
        quote(name),
        cols.join(", "),
        values.join(", ")
    )
}

/// The statement: the tables' entries, then the model's query, at most `limit` rows.
pub fn statement(entries: &[String], query: &str, limit: usize) -> String {
    format!(
        "WITH {} SELECT * FROM ({query}) LIMIT {limit}",
        entries.join(", ")
    )
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_table_is_a_with_entry_over_its_bound_rows() {
        assert_eq!(
            super::table_entry("scratch:bank", &["ref".into(), "a\"b".into()], 2),
            "\"scratch:bank\"(\"ref\", \"a\"\"b\") AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?2))"
        );
    }
}

//! CSV and TSV files through the `csv` crate, as a [`Table`] of typed cells: a cell that
//! reads as a number is one (so sums and comparisons in SQL are numeric), an empty cell is
//! empty, anything else is text. Semicolon-separated files (common where the comma is the
//! decimal mark) are recognised from their first line.

use crate::table::{Cell, Table};
use crate::ReadError;

/// The separator of `name`'s values: a tab for `.tsv`, else whichever of `,` `;` and tab
/// the first line has most of (a comma when none).
pub fn separator(name: &str, bytes: &[u8]) -> u8 {
    if name.to_ascii_lowercase().ends_with(".tsv") {
        return b'\t';
    }
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let count = |c: u8| first.iter().filter(|b| **b == c).count();
    [b';', b'\t']
        .into_iter()
        .filter(|c| count(*c) > count(b','))
        .max_by_key(|c| count(*c))
        .unwrap_or(b',')
}

/// A cell's text as a value: an integer, a decimal number, empty, or the text (trimmed).
pub fn typed(text: &str) -> Cell {
    let t = text.trim();
    if t.is_empty() {
        return Cell::Empty;
    }
    // Only plain decimal notation counts as a number: f64's parser also takes "inf" and
    // "NaN", and a code like "007" keeps its zeros as text.
    let numeric = t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        && !(t.len() > 1 && t.starts_with('0') && !t.starts_with("0."));
    if numeric {
        if let Ok(i) = t.parse::<i64>() {
            return Cell::Int(i);
        }
        if let Ok(f) = t.parse::<f64>() {
            return Cell::Float(f);
        }
    }
    Cell::Text(t.to_string())
}

/// The table in the CSV file `name`.
pub fn table(name: &str, bytes: &[u8]) -> Result<Table, ReadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(separator(name, bytes))
        .from_reader(bytes);
    let mut rows = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| ReadError::new(format!("it is not valid CSV: {e}")))?;
        rows.push(
            record
                .iter()
                .map(|f| typed(&String::from_utf8_lossy(f)))
                .collect(),
        );
    }
    Ok(Table::from_rows(name, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_numbers_and_codes_stay_text() {
        assert_eq!(typed(" 12 "), Cell::Int(12));
        assert_eq!(typed("-1250.50"), Cell::Float(-1250.5));
        assert_eq!(typed("007"), Cell::Text("007".into()));
        assert_eq!(typed("inf"), Cell::Text("inf".into()));
        assert_eq!(typed("1,250.00"), Cell::Text("1,250.00".into()));
        assert_eq!(typed(""), Cell::Empty);
    }

    #[test]
    fn a_csv_is_a_table_under_its_header_whatever_its_separator() {
        let t = table("a.csv", b"\xEF\xBB\xBFref;amount\nA1;12.5\nA2;\"3\"\n").unwrap();
        assert_eq!(t.headers, ["ref", "amount"]);
        assert_eq!(
            t.rows,
            [
                vec![Cell::Text("A1".into()), Cell::Float(12.5)],
                vec![Cell::Text("A2".into()), Cell::Int(3)]
            ]
        );
        let t = table("b.tsv", b"x\ty\n1\t2\n").unwrap();
        assert_eq!(t.rows, [vec![Cell::Int(1), Cell::Int(2)]]);
    }
}

//! Workbooks (xlsx, xlsm, xlsb, xls, ods) through calamine: every sheet as a [`Table`], shown
//! as Markdown within [`crate::table::PREVIEW`]; dates as ISO-8601 text, formulas as their
//! last computed values (what the file stores).

use std::io::Cursor;

use calamine::{open_workbook_auto_from_rs, Data, Reader, Sheets};

use crate::table::{Cell, Table, PREVIEW};
use crate::{zipped, ReadError};

/// The most sheets a preview shows (the rest are named).
pub const MAX_PREVIEW_SHEETS: usize = 20;

type Workbook<'a> = Sheets<Cursor<&'a [u8]>>;

fn open(bytes: &[u8]) -> Result<Workbook<'_>, ReadError> {
    // xlsx, xlsm, xlsb and ods are zips: their unpacked size is checked first.
    if zipped::is_zip(bytes) {
        zipped::open(bytes).map_err(|e| ReadError::new(format!("the workbook: {e}")))?;
    }
    open_workbook_auto_from_rs(Cursor::new(bytes)).map_err(|e| {
        ReadError::new(format!(
            "it is not a workbook that can be read (xlsx, xlsm, xlsb, xls or ods): {e}"
        ))
    })
}

fn cell(data: &Data) -> Cell {
    match data {
        Data::Empty => Cell::Empty,
        Data::Int(i) => Cell::Int(*i),
        Data::Float(f) => Cell::Float(*f),
        Data::Bool(b) => Cell::Bool(*b),
        Data::String(s) => Cell::Text(s.clone()),
        // ISO 8601 (`2024-03-01`, `2024-03-01 09:30:00`), so dates compare and sort as text.
        Data::DateTime(d) => match d.as_datetime().map(|t| t.to_string()) {
            Some(t) => Cell::Text(t.strip_suffix(" 00:00:00").unwrap_or(&t).to_string()),
            None => Cell::Float(d.as_f64()),
        },
        Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
        Data::Error(e) => Cell::Text(format!("#{e:?}")),
    }
}

fn read_sheet(book: &mut Workbook<'_>, name: &str) -> Result<Table, ReadError> {
    let range = book
        .worksheet_range(name)
        .map_err(|e| ReadError::new(format!("sheet {name:?} cannot be read: {e}")))?;
    let rows = range.rows().map(|r| r.iter().map(cell).collect()).collect();
    Ok(Table::from_rows(name, rows))
}

/// The sheet `sheet` (or the first) of the workbook in `bytes`.
pub fn sheet(bytes: &[u8], sheet: Option<&str>) -> Result<Table, ReadError> {
    let mut book = open(bytes)?;
    let names = book.sheet_names();
    let name = match sheet {
        None => names
            .first()
            .cloned()
            .ok_or_else(|| ReadError::new("the workbook has no sheets"))?,
        Some(s) => names.iter().find(|n| *n == s).cloned().ok_or_else(|| {
            ReadError::new(format!(
                "the workbook has no sheet {s:?} (its sheets: {})",
                quoted(&names)
            ))
        })?,
    };
    read_sheet(&mut book, &name)
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The workbook as `read_file` shows it: its sheets' names, then each sheet as a Markdown
/// table with a bounded preview.
pub fn preview(bytes: &[u8]) -> Result<String, ReadError> {
    let mut book = open(bytes)?;
    let names = book.sheet_names();
    let mut out = format!(
        "# Workbook: {} sheet{} ({})\n\n",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        quoted(&names)
    );
    for name in names.iter().take(MAX_PREVIEW_SHEETS) {
        let table = read_sheet(&mut book, name)?;
        out.push_str(&table.markdown(&format!("Sheet {name:?}"), PREVIEW));
        out.push('\n');
    }
    if names.len() > MAX_PREVIEW_SHEETS {
        out.push_str(&format!(
            "({} more sheets not shown here: query_table loads any sheet by name.)\n",
            names.len() - MAX_PREVIEW_SHEETS
        ));
    }
    Ok(out)
}

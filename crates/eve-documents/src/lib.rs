//! What the agent reads of office documents (issue 33): spreadsheets (xlsx, xlsm, xlsb, xls,
//! ods) sheet by sheet as Markdown tables with a bounded preview, CSV as a table, docx as
//! Markdown text (headings, lists and tables kept), PDF as its text page by page. Each format
//! is read by a crate made for it; what this crate decides — which kind a file is, how much of
//! it is shown, how a table is laid out — is plain functions tested natively.
//!
//! A file that is not what it claims, or is damaged, is a [`ReadError`] with a sentence the
//! model can act on, never a panic.

pub mod delimited;
pub mod docx;
pub mod kinds;
pub mod pdf;
pub mod spreadsheet;
pub mod table;
#[cfg(feature = "testing")]
pub mod testing;
mod zipped;

pub use kinds::Kind;
pub use table::{Cell, Table};

/// Why a document could not be read (shown to the model as the tool's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(pub String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ReadError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ReadError(message.into())
    }
}

/// The text `read_file` shows of a document named `name` of type `media_type`; `None` for a
/// file that is no document (plain text and CSV are read as they are, images are not text).
pub fn text_of(media_type: &str, name: &str, bytes: &[u8]) -> Option<Result<String, ReadError>> {
    match Kind::of(media_type, name)? {
        Kind::Spreadsheet => Some(spreadsheet::preview(bytes)),
        Kind::Docx => Some(docx::text(bytes)),
        Kind::Pdf => Some(pdf::text(bytes)),
        Kind::Csv => None,
    }
}

/// The table in a spreadsheet's sheet (`sheet`, or its first) or in a CSV file, for
/// `query_table`; a document of another kind is an error that says what can be loaded.
pub fn table_of(
    media_type: &str,
    name: &str,
    bytes: &[u8],
    sheet: Option<&str>,
) -> Result<Table, ReadError> {
    match Kind::of(media_type, name) {
        Some(Kind::Spreadsheet) => spreadsheet::sheet(bytes, sheet),
        Some(Kind::Csv) if sheet.is_some() => Err(ReadError::new(format!(
            "{name} is a CSV file: it has no sheets (leave sheet out)"
        ))),
        Some(Kind::Csv) => delimited::table(name, bytes),
        _ => Err(ReadError::new(format!(
            "{name} is not a spreadsheet or a CSV file: only .xlsx, .xlsm, .xlsb, .xls, .ods, .csv and .tsv files load as tables"
        ))),
    }
}

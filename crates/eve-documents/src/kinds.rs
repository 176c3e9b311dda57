//! Which kind of document a file is: by its name's extension first (browsers and operating
//! systems disagree on office types: Windows sends a CSV as `application/vnd.ms-excel`), then
//! by its declared media type.

/// The media types of the documents read here.
pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
pub const XLSM: &str = "application/vnd.ms-excel.sheet.macroenabled.12";
pub const XLSB: &str = "application/vnd.ms-excel.sheet.binary.macroenabled.12";
pub const XLS: &str = "application/vnd.ms-excel";
pub const ODS: &str = "application/vnd.oasis.opendocument.spreadsheet";
pub const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
pub const PDF: &str = "application/pdf";
pub const CSV: &str = "text/csv";
pub const TSV: &str = "text/tab-separated-values";

/// Every media type read here (the upload policy accepts them by default).
pub const MEDIA_TYPES: [&str; 9] = [XLSX, XLSM, XLSB, XLS, ODS, DOCX, PDF, CSV, TSV];

/// A kind of document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A workbook calamine reads: xlsx, xlsm, xlsb, xls, ods.
    Spreadsheet,
    /// Comma-, semicolon- or tab-separated values.
    Csv,
    /// A Word document (Office Open XML).
    Docx,
    Pdf,
}

impl Kind {
    /// The kind of a file named `name` declared as `media_type`; `None`: no document.
    pub fn of(media_type: &str, name: &str) -> Option<Kind> {
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        let by_name = match ext.as_str() {
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => Some(Kind::Spreadsheet),
            "csv" | "tsv" => Some(Kind::Csv),
            "docx" => Some(Kind::Docx),
            "pdf" => Some(Kind::Pdf),
            _ => None,
        };
        let essence = media_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        by_name.or(match essence.as_str() {
            XLSX | XLSM | XLSB | XLS | ODS => Some(Kind::Spreadsheet),
            CSV | TSV => Some(Kind::Csv),
            DOCX => Some(Kind::Docx),
            PDF => Some(Kind::Pdf),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_decides_before_the_declared_type() {
        assert_eq!(Kind::of(XLS, "march.csv"), Some(Kind::Csv));
        assert_eq!(
            Kind::of("application/octet-stream", "Bank.XLSX"),
            Some(Kind::Spreadsheet)
        );
        assert_eq!(Kind::of(DOCX, "letter"), Some(Kind::Docx));
        assert_eq!(Kind::of("application/pdf; x=1", "scan"), Some(Kind::Pdf));
        assert_eq!(Kind::of("text/plain", "notes.txt"), None);
        assert_eq!(Kind::of("image/png", "a.png"), None);
    }
}

//! Real files for tests, written by libraries rather than by hand: workbooks by
//! rust_xlsxwriter, Word documents by the zip crate (a minimal valid package), PDFs by lopdf.

use std::io::Write;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Object, Stream};
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

/// A cell to write.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    Text(&'a str),
    Number(f64),
    /// `YYYY-MM-DD`, written as an Excel date with a date format.
    Date(&'a str),
}

/// An xlsx workbook with `sheets`: (name, rows).
pub fn xlsx(sheets: &[(&str, Vec<Vec<Value<'_>>>)]) -> Vec<u8> {
    let mut book = Workbook::new();
    let date = Format::new().set_num_format("yyyy-mm-dd");
    for (name, rows) in sheets {
        let sheet = book.add_worksheet();
        sheet.set_name(*name).expect("sheet name");
        for (r, row) in rows.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let (r, c) = (r as u32, c as u16);
                match v {
                    Value::Text(t) => sheet.write_string(r, c, *t).map(|_| ()),
                    Value::Number(n) => sheet.write_number(r, c, *n).map(|_| ()),
                    Value::Date(d) => {
                        let d = ExcelDateTime::parse_from_str(d).expect("date");
                        sheet.write_datetime_with_format(r, c, d, &date).map(|_| ())
                    }
                }
                .expect("cell");
            }
        }
    }
    book.save_to_buffer().expect("workbook")
}

/// A docx whose body is `body` (WordprocessingML inside `<w:body>`).
pub fn docx(body: &str) -> Vec<u8> {
    const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    let parts = [
        ("[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>".to_string()),
        ("_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/></Relationships>".to_string()),
        ("word/document.xml", format!("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><w:document xmlns:w=\"{W}\"><w:body>{body}</w:body></w:document>")),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        zip.start_file(name, options).expect("part");
        zip.write_all(text.as_bytes()).expect("write");
    }
    zip.finish().expect("zip").into_inner()
}

/// A WordprocessingML paragraph of `text`, with the paragraph style `style` (`Heading1`…).
pub fn docx_paragraph(style: Option<&str>, text: &str) -> String {
    let props = style.map_or(String::new(), |s| {
        format!("<w:pPr><w:pStyle w:val=\"{s}\"/></w:pPr>")
    });
    format!("<w:p>{props}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
}

/// A WordprocessingML table of `rows`.
pub fn docx_table(rows: &[&[&str]]) -> String {
    let row = |cells: &[&str]| {
        let cells: String = cells
            .iter()
            .map(|c| format!("<w:tc>{}</w:tc>", docx_paragraph(None, c)))
            .collect();
        format!("<w:tr>{cells}</w:tr>")
    };
    format!(
        "<w:tbl>{}</w:tbl>",
        rows.iter().map(|r| row(r)).collect::<String>()
    )
}

/// A PDF with one page per entry of `pages`, each its lines of text in Helvetica.
pub fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    let mut doc = lopdf::Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for lines in pages {
        let mut ops = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
            Operation::new("TL", vec![16.into()]),
            Operation::new("Td", vec![72.into(), 770.into()]),
        ];
        for line in *lines {
            ops.push(Operation::new("Tj", vec![Object::string_literal(*line)]));
            ops.push(Operation::new("T*", vec![]));
        }
        ops.push(Operation::new("ET", vec![]));
        let content = Content { operations: ops }.encode().expect("content");
        let content = doc.add_object(Stream::new(dictionary! {}, content));
        let page = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content,
        });
        kids.push(page.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("pdf");
    out
}

/// The worked reconciliation (docs/projects.md): March's bank statement as a workbook and the
/// company's ledger as CSV, with three deliberate mismatches — INV-1003 booked as 1250.00 but
/// paid 1205.00, a bank fee (FEE-03) not in the ledger, a cheque (CHQ-5120) not yet cleared.
pub fn bank_statement_xlsx() -> Vec<u8> {
    let row = |d, r, t, a| {
        vec![
            Value::Date(d),
            Value::Text(r),
            Value::Text(t),
            Value::Number(a),
        ]
    };
    xlsx(&[
        (
            "March",
            vec![
                vec![
                    Value::Text("Date"),
                    Value::Text("Reference"),
                    Value::Text("Description"),
                    Value::Text("Amount"),
                ],
                row("2024-03-01", "INV-1001", "Client A", 1250.0),
                row("2024-03-05", "INV-1002", "Client B", 980.4),
                row("2024-03-08", "SUP-77", "Office rent", -1500.0),
                row("2024-03-12", "INV-1003", "Client C", 1205.0),
                row("2024-03-29", "FEE-03", "Bank fee", -12.5),
            ],
        ),
        (
            "Summary",
            vec![vec![Value::Text("Account"), Value::Text("Current")]],
        ),
    ])
}

/// The ledger of [`bank_statement_xlsx`]'s month.
pub const LEDGER_CSV: &str = "date,reference,amount\n2024-03-01,INV-1001,1250.00\n2024-03-05,INV-1002,980.40\n2024-03-08,SUP-77,-1500.00\n2024-03-12,INV-1003,1250.00\n2024-03-30,CHQ-5120,-320.00\n";

/// The rows that do not match, as `query_table` finds them with tables `bank` (the sheet) and
/// `ledger` (the CSV file).
pub const MISMATCHES_SQL: &str = "SELECT b.reference AS reference, b.amount AS bank, l.amount AS ledger, round(b.amount - coalesce(l.amount, 0), 2) AS difference FROM bank b LEFT JOIN ledger l ON l.reference = b.reference WHERE l.reference IS NULL OR b.amount <> l.amount UNION ALL SELECT l.reference, NULL, l.amount, round(-l.amount, 2) FROM ledger l LEFT JOIN bank b ON b.reference = l.reference WHERE b.reference IS NULL ORDER BY reference";

/// Both statements' totals.
pub const TOTALS_SQL: &str = "SELECT (SELECT round(sum(amount), 2) FROM bank) AS bank_total, (SELECT round(sum(amount), 2) FROM ledger) AS ledger_total";

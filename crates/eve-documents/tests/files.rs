//! Real files, written by libraries, read back as the agent reads them.

use eve_documents::kinds::{DOCX, PDF, XLSX};
use eve_documents::testing::{self, docx_paragraph, docx_table, Value::*};
use eve_documents::{table_of, text_of, Cell};

fn statement() -> Vec<u8> {
    testing::xlsx(&[
        (
            "March",
            vec![
                vec![Text("Date"), Text("Reference"), Text("Amount")],
                vec![Date("2024-03-01"), Text("INV-1"), Number(1250.0)],
                vec![Date("2024-03-04"), Text("INV-2"), Number(-80.25)],
            ],
        ),
        ("Notes", vec![vec![Text("checked by"), Text("Ana")]]),
    ])
}

#[test]
fn a_workbook_reads_sheet_by_sheet_as_markdown_tables() {
    let text = text_of(XLSX, "bank.xlsx", &statement()).unwrap().unwrap();
    assert!(
        text.starts_with("# Workbook: 2 sheets (\"March\", \"Notes\")"),
        "{text}"
    );
    assert!(
        text.contains("## Sheet \"March\" (2 rows × 3 columns under its header)\n\n| Date | Reference | Amount |\n| --- | --- | --- |\n| 2024-03-01 | INV-1 | 1250 |\n| 2024-03-04 | INV-2 | -80.25 |\n"),
        "{text}"
    );
    assert!(text.contains("## Sheet \"Notes\""), "{text}");
}

#[test]
fn a_sheet_loads_as_a_typed_table_and_an_unknown_sheet_names_the_others() {
    let t = table_of(XLSX, "bank.xlsx", &statement(), Some("March")).unwrap();
    assert_eq!(t.headers, ["Date", "Reference", "Amount"]);
    assert_eq!(
        t.rows[1],
        [
            Cell::Text("2024-03-04".into()),
            Cell::Text("INV-2".into()),
            Cell::Float(-80.25)
        ]
    );
    let first = table_of(XLSX, "bank.xlsx", &statement(), None).unwrap();
    assert_eq!(first.name, "March");
    let e = table_of(XLSX, "bank.xlsx", &statement(), Some("April")).unwrap_err();
    assert_eq!(
        e.0,
        "the workbook has no sheet \"April\" (its sheets: \"March\", \"Notes\")"
    );
}

#[test]
fn a_word_document_keeps_its_headings_and_tables() {
    let body = [
        docx_paragraph(Some("Heading1"), "Reconciliation policy"),
        docx_paragraph(None, "Differences over 10 EUR are escalated."),
        docx_table(&[&["Account", "Owner"], &["Current", "Finance"]]),
    ]
    .concat();
    let text = text_of(DOCX, "policy.docx", &testing::docx(&body))
        .unwrap()
        .unwrap();
    assert_eq!(
        text,
        "# Reconciliation policy\n\nDifferences over 10 EUR are escalated.\n\n| Account | Owner |\n| --- | --- |\n| Current | Finance |\n"
    );
}

#[test]
fn a_pdf_reads_page_by_page() {
    let pdf = testing::pdf(&[
        &["Statement of account", "Closing balance 1169.75"],
        &["Page two"],
    ]);
    let text = text_of(PDF, "s.pdf", &pdf).unwrap().unwrap();
    assert!(
        text.starts_with("# PDF: 2 pages\n\n## Page 1\n\n"),
        "{text}"
    );
    assert!(text.contains("Closing balance 1169.75"), "{text}");
    assert!(text.contains("## Page 2\n\nPage two"), "{text}");
}

#[test]
fn damaged_or_mislabelled_files_are_errors_never_panics() {
    let book = statement();
    for bytes in [
        &book[..book.len() / 2],
        &book[..40],
        b"not a workbook" as &[u8],
        b"",
    ] {
        assert!(text_of(XLSX, "x.xlsx", bytes).unwrap().is_err());
        assert!(table_of(XLSX, "x.xlsx", bytes, None).is_err());
    }
    let doc = testing::docx(&docx_paragraph(None, "x"));
    assert!(text_of(DOCX, "x.docx", &doc[..doc.len() - 30])
        .unwrap()
        .is_err());
    // A workbook is not a document and a document is not a table.
    assert!(text_of(DOCX, "x.docx", &book).unwrap().is_err());
    let e = table_of(DOCX, "x.docx", &doc, None).unwrap_err();
    assert!(e.0.contains("not a spreadsheet or a CSV file"), "{}", e.0);
    let pdf = testing::pdf(&[&["x"]]);
    // lopdf may recover a cut PDF's objects: either way an answer, not a panic.
    match text_of(PDF, "x.pdf", &pdf[..pdf.len() / 2]).unwrap() {
        Ok(text) => assert!(text.starts_with("# PDF: "), "{text}"),
        Err(e) => assert!(e.0.contains("PDF"), "{}", e.0),
    }
}

//! PDFs as their text, page by page (`## Page N`), through lopdf's text extraction: the text
//! a PDF draws, in the order it draws it. A scanned page (an image) has none; a PDF with a
//! password is refused with that reason.

use crate::ReadError;

/// The most bytes one content stream may inflate to while its text is extracted (lopdf's
/// guard against compression bombs; the agent's memory is capped).
pub const MAX_STREAM_BYTES: usize = 32 * 1024 * 1024;

/// The PDF in `bytes` as text.
pub fn text(bytes: &[u8]) -> Result<String, ReadError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(ReadError::new(
            "it is not a PDF (it does not start with %PDF-)",
        ));
    }
    let doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| ReadError::new(format!("the PDF is damaged and cannot be read: {e}")))?;
    if doc.is_encrypted() {
        return Err(ReadError::new(
            "the PDF is protected by a password: its text cannot be read",
        ));
    }
    let pages = doc.get_pages();
    let mut out = format!("# PDF: {} page{}\n", pages.len(), plural(pages.len()));
    for n in pages.keys() {
        let page = doc
            .extract_text_with_limit(&[*n], MAX_STREAM_BYTES)
            .unwrap_or_else(|e| format!("(the text of this page cannot be read: {e})"));
        let page = page.trim();
        out.push_str(&format!("\n## Page {n}\n\n"));
        out.push_str(if page.is_empty() {
            "(no text on this page)"
        } else {
            page
        });
        out.push('\n');
    }
    Ok(out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_pdf_or_is_damaged_is_an_error() {
        assert!(text(b"hello").is_err());
        assert!(text(b"%PDF-1.7\n1 0 obj << /Type /Catalog").is_err());
    }
}

//! What one model call gets of a file in the history ([`model_file`]): images and PDFs as
//! bytes where every provider reads them (eve's limits), text inlined, anything else as a
//! labelled note; the stored bytes are read just before the call ([`resolve`], over a request by
//! `providers::model::resolve_files`). The upload
//! policy that let the file in is [`eve_protocol::uploads`].

use base64::Engine;

use eve_protocol::uploads::{sniff, Kind, BASE64};

/// Images up to this size reach the model as bytes (eve: 3 MiB).
pub const MAX_IMAGE_BYTES: usize = 3 * 1024 * 1024;
/// PDFs up to this size reach the model as bytes (eve: 20 MiB).
pub const MAX_PDF_BYTES: usize = 20 * 1024 * 1024;
/// The most characters of a text file inlined into the model's context.
pub const MAX_INLINE_TEXT_CHARS: usize = 100_000;

/// A file as one model call sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFile {
    pub filename: Option<String>,
    pub media_type: String,
    pub content: FileContent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FileContent {
    /// Stored bytes not read yet ([`resolve`] reads them before the call).
    Stored(String),
    Image {
        media_type: String,
        base64: String,
    },
    Pdf {
        base64: String,
    },
    /// A text file's contents (inlined after the label).
    Text(String),
    /// Only the label and a note reach the model.
    Note(String),
}

impl ModelFile {
    /// eve's label before a file's bytes.
    pub fn label(&self) -> String {
        format!(
            "Attached file {} ({})",
            self.filename.as_deref().unwrap_or("(unnamed)"),
            self.media_type
        )
    }

    /// The file as text: the label, then the contents of a text file or the note (what a
    /// provider that takes no bytes of this kind gets).
    pub fn as_text(&self) -> String {
        match &self.content {
            FileContent::Text(t) => format!("{}:\n\n{t}", self.label()),
            FileContent::Note(n) => format!("{}. {n}", self.label()),
            FileContent::Stored(_) => format!("{}. {NOT_FOUND}", self.label()),
            FileContent::Image { .. } | FileContent::Pdf { .. } => self.label(),
        }
    }

    /// Characters it costs in the context window (a rough measure, as the rest of the history).
    pub fn cost(&self) -> usize {
        match &self.content {
            FileContent::Text(t) => t.len() + 64,
            FileContent::Note(n) => n.len() + 64,
            // An image or a page costs the model about a thousand tokens.
            _ => 4_000,
        }
    }
}

/// The note for a file whose bytes are gone (eve's `FileNotFound`).
pub const NOT_FOUND: &str = "FileNotFound: the file is no longer available.";
/// The note for a file whose kind the model cannot read.
pub const NOT_READABLE: &str = "Its contents cannot be shown to the model.";
/// The note for a file that was linked, not uploaded (the agent fetches no URLs).
pub const NOT_FETCHED: &str = "It was sent as a link, which the agent does not fetch.";

/// What the model gets of a file whose bytes are `bytes` (`None`: gone).
pub fn model_file(filename: Option<String>, media_type: &str, bytes: Option<&[u8]>) -> ModelFile {
    let content = match bytes {
        None => FileContent::Note(NOT_FOUND.into()),
        Some(b) => match sniff(media_type, b) {
            Kind::Image(t) if b.len() <= MAX_IMAGE_BYTES => FileContent::Image {
                media_type: t.into(),
                base64: BASE64.encode(b),
            },
            Kind::Pdf if b.len() <= MAX_PDF_BYTES => FileContent::Pdf {
                base64: BASE64.encode(b),
            },
            Kind::Text => {
                let text = std::str::from_utf8(b).unwrap_or_default();
                match text.char_indices().nth(MAX_INLINE_TEXT_CHARS) {
                    Some((cut, _)) => FileContent::Text(format!(
                        "{}\n[cut: the file is longer than {MAX_INLINE_TEXT_CHARS} characters]",
                        &text[..cut]
                    )),
                    None => FileContent::Text(text.to_string()),
                }
            }
            _ => FileContent::Note(NOT_READABLE.into()),
        },
    };
    ModelFile {
        filename,
        media_type: media_type.to_string(),
        content,
    }
}

/// Reads the stored bytes of a [`FileContent::Stored`] file (through `read`) and turns them
/// into what the model gets; any other file is left as it is.
pub fn resolve(file: &mut ModelFile, read: &mut dyn FnMut(&str) -> Option<Vec<u8>>) {
    if let FileContent::Stored(id) = &file.content {
        let bytes = read(id);
        *file = model_file(file.filename.take(), &file.media_type, bytes.as_deref());
    }
}

/// The base64 of `bytes` (for the providers' data URLs).
pub fn base64(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn the_model_gets_images_and_pdfs_as_bytes_text_inline_and_a_note_otherwise() {
        let img = model_file(Some("p.png".into()), "image/png", Some(PNG));
        assert_eq!(
            img.content,
            FileContent::Image {
                media_type: "image/png".into(),
                base64: base64(PNG)
            }
        );
        // Declared an image, bytes are not: never sent as one.
        let fake = model_file(Some("p.png".into()), "image/png", Some(b"hello"));
        assert_eq!(fake.content, FileContent::Note(NOT_READABLE.into()));
        let pdf = model_file(None, "application/pdf", Some(b"%PDF-1.7 ..."));
        assert!(matches!(pdf.content, FileContent::Pdf { .. }));
        let csv = model_file(Some("a.csv".into()), "text/csv", Some(b"a,b\n1,2"));
        assert_eq!(csv.as_text(), "Attached file a.csv (text/csv):\n\na,b\n1,2");
        let gone = model_file(Some("a.csv".into()), "text/csv", None);
        assert_eq!(
            gone.as_text(),
            format!("Attached file a.csv (text/csv). {NOT_FOUND}")
        );
        let long = "é".repeat(MAX_INLINE_TEXT_CHARS + 5);
        let cut = model_file(None, "text/plain", Some(long.as_bytes()));
        let FileContent::Text(t) = cut.content else {
            panic!("text")
        };
        assert!(t.starts_with(&"é".repeat(MAX_INLINE_TEXT_CHARS)));
        assert!(t.ends_with("characters]"));
    }
}

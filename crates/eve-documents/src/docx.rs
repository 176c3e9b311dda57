//! Word documents (Office Open XML) as Markdown: the body (`word/document.xml`) read with a
//! pull parser (quick-xml) — paragraphs in order, `Heading N` / `Title` styles as `#`
//! headings, numbered or bulleted paragraphs as `- ` items, tables as Markdown tables (a
//! table inside a cell is flattened into the cell's text). Deleted text of tracked changes,
//! field codes and drawings are not text and are left out.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::{zipped, ReadError};

/// The part that holds a document's body.
pub const BODY_PART: &str = "word/document.xml";

/// The document in `bytes` as Markdown text.
pub fn text(bytes: &[u8]) -> Result<String, ReadError> {
    let fail = |e: ReadError| ReadError::new(format!("the document cannot be read: {e}"));
    let mut archive = zipped::open(bytes).map_err(fail)?;
    let xml = zipped::part_text(&mut archive, BODY_PART).map_err(fail)?;
    body_markdown(&xml)
        .map_err(|e| ReadError::new(format!("the document's body is not valid XML: {e}")))
}

/// What the walk is inside of.
#[derive(Default)]
struct Walk {
    out: Vec<String>,
    /// The paragraph being read, and what its properties said it is.
    para: String,
    heading: Option<usize>,
    listed: bool,
    in_text: bool,
    /// Open tables: rows of cells (outermost first); a cell's paragraphs joined by spaces.
    tables: Vec<Vec<Vec<String>>>,
}

fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    e.try_get_attribute(key).ok().flatten().and_then(|a| {
        a.normalized_value(XmlVersion::Implicit1_0)
            .ok()
            .map(|v| v.into_owned())
    })
}

/// `Heading1` … `Heading9` (any case, as Word and LibreOffice name them) and `Title`.
fn heading_level(style: &str) -> Option<usize> {
    let s = style.to_ascii_lowercase();
    if s == "title" {
        return Some(1);
    }
    s.strip_prefix("heading")
        .and_then(|n| n.trim().parse::<usize>().ok())
        .filter(|n| (1..=6).contains(n))
}

impl Walk {
    fn start(&mut self, e: &BytesStart<'_>) {
        match e.name().as_ref() {
            "w:p" => {
                self.para.clear();
                self.heading = None;
                self.listed = false;
            }
            "w:pStyle" => self.heading = attr(e, "w:val").as_deref().and_then(heading_level),
            "w:numPr" => self.listed = true,
            "w:t" => self.in_text = true,
            "w:tab" => self.para.push('\t'),
            "w:br" | "w:cr" => self
                .para
                .push(if self.tables.is_empty() { '\n' } else { ' ' }),
            "w:tbl" => self.tables.push(Vec::new()),
            "w:tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            "w:tc" if self.tables.len() == 1 => {
                if let Some(row) = self.tables.last_mut().and_then(|t| t.last_mut()) {
                    row.push(String::new());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "w:t" => self.in_text = false,
            "w:p" => self.end_paragraph(),
            "w:tbl" => {
                if let Some(table) = self.tables.pop() {
                    if self.tables.is_empty() {
                        self.out.push(markdown_table(&table));
                    }
                }
            }
            _ => {}
        }
    }

    fn end_paragraph(&mut self) {
        let text = self.para.trim().to_string();
        if let Some(cell) = self
            .tables
            .first_mut()
            .and_then(|t| t.last_mut())
            .and_then(|r| r.last_mut())
        {
            if !text.is_empty() {
                if !cell.is_empty() {
                    cell.push(' ');
                }
                cell.push_str(&text);
            }
        } else if !text.is_empty() {
            self.out.push(match (self.heading, self.listed) {
                (Some(n), _) => format!("{} {text}", "#".repeat(n)),
                (None, true) => format!("- {text}"),
                (None, false) => text,
            });
        }
    }

    fn text(&mut self, s: &str) {
        if self.in_text {
            self.para.push_str(s);
        }
    }
}

fn markdown_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let line = |r: &[String]| {
        let cells: Vec<String> = (0..width)
            .map(|i| r.get(i).map_or(String::new(), |c| c.replace('|', "\\|")))
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&rows[0]), line(&vec!["---".to_string(); width])];
    out.extend(rows[1..].iter().map(|r| line(r)));
    out.join("\n")
}

/// The Markdown of a document body's XML.
pub fn body_markdown(xml: &str) -> Result<String, quick_xml::Error> {
    let mut reader = Reader::from_str(xml);
    let mut walk = Walk::default();
    loop {
        match reader.read_event()? {
            Event::Start(e) => walk.start(&e),
            Event::Empty(e) => {
                walk.start(&e);
                walk.end(e.name().as_ref());
            }
            Event::End(e) => walk.end(e.name().as_ref()),
            Event::Text(t) => walk.text(&t.xml10_content()),
            Event::CData(t) => walk.text(&t.xml10_content()),
            Event::GeneralRef(r) => {
                let name = r.xml10_content();
                let resolved = match r.resolve_char_ref()? {
                    Some(c) => Some(c.to_string()),
                    None => quick_xml::escape::resolve_predefined_entity(&name).map(Into::into),
                };
                if let Some(s) = resolved {
                    walk.text(&s);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(walk.out.join("\n\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn para(style: Option<&str>, text: &str) -> String {
        let props = style.map_or(String::new(), |s| {
            format!("<w:pPr><w:pStyle w:val=\"{s}\"/></w:pPr>")
        });
        format!("<w:p>{props}<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>")
    }

    #[test]
    fn headings_lists_paragraphs_and_tables_are_kept() {
        let cell = |t: &str| format!("<w:tc>{}</w:tc>", para(None, t));
        let xml = format!(
            "<w:document xmlns:w=\"x\"><w:body>{}{}<w:p><w:pPr><w:numPr/></w:pPr><w:r><w:t>first</w:t></w:r></w:p><w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>{}<w:p><w:r><w:delText>gone</w:delText></w:r></w:p></w:body></w:document>",
            para(Some("Heading1"), "Q1 report"),
            para(None, "Fish &amp; chips&#33;"),
            cell("Item"),
            cell("Cost"),
            cell("Tea | milk"),
            cell("3.50"),
            para(Some("heading2"), "Notes"),
        );
        assert_eq!(
            body_markdown(&xml).unwrap(),
            "# Q1 report\n\nFish & chips!\n\n- first\n\n| Item | Cost |\n| --- | --- |\n| Tea \\| milk | 3.50 |\n\n## Notes\n"
        );
    }

    #[test]
    fn a_damaged_document_is_an_error_not_a_panic() {
        assert!(text(b"PK\x03\x04 not really").is_err());
        assert!(text(b"hello").is_err());
        assert!(body_markdown("<w:p><w:t>open</w:p>").is_err());
    }
}

//! Requests the providers' tests share.

use crate::files::model_file;
use crate::model::{ModelMessage, ModelRequest};

/// A model request with one file of each kind the providers treat differently (image, PDF, text
/// inlined, and a type no provider takes) after a user message, and an empty user message among
/// them: what both providers' request-body tests turn into their own wire shape.
pub fn mixed_files_request() -> ModelRequest {
    let file = |name: &str, media_type: &str, bytes: &[u8]| {
        ModelMessage::File(model_file(Some(name.into()), media_type, Some(bytes)))
    };
    ModelRequest {
        system: "sys".into(),
        messages: vec![
            ModelMessage::User("what is in these?".into()),
            file("p.png", "image/png", b"\x89PNG\r\n\x1a\n\0\0"),
            file("r.pdf", "application/pdf", b"%PDF-1.4"),
            file("a.csv", "text/csv", b"a,b"),
            ModelMessage::User(String::new()),
            file("z.zip", "application/zip", b"PK"),
        ],
        tools: vec![],
    }
}

//! What the providers' tests share: a request with files, and a call streamed through a
//! provider's wire format.

use crate::files::model_file;
use crate::http::testing::{collect, Scripted};
use crate::http::{HttpModel, WireProtocol};
use crate::model::{ModelError, ModelEvent, ModelMessage, ModelRequest};

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

/// Streams `request` through `protocol` over a transport that answers `status` with the body
/// `chunks` (each one read); the events (keep-alives aside) and how the call ended.
pub fn stream_through(
    protocol: impl WireProtocol,
    status: u16,
    chunks: &[&str],
    request: &ModelRequest,
) -> (Vec<ModelEvent>, Result<(), ModelError>) {
    let mut transport = Scripted::new(status, chunks);
    let mut model = HttpModel {
        protocol,
        transport: &mut transport,
    };
    collect(&mut model, request)
}

//! `GET /eve/v1/session/:id/stream`: parses the format and the cursor, opens the session's
//! stream and serves it (`eve_agent::service::stream`, which follows, keeps alive, and takes
//! over a session nobody runs) into the response body as it is written.

use eve_agent::protocol::framing::StreamFormat;
use eve_agent::service::stream::{self, Served, StreamOut};
use eve_spin::streaming::BodyWriter;
use spin_sdk::http::ResponseOutparam;

use crate::reply::{open_db, send_refusal, Call};
use eve_agent_spin::Spin;

/// The response body, written chunk by chunk as it is produced.
struct Body(BodyWriter);

impl StreamOut for Body {
    fn write(&mut self, bytes: &[u8]) -> bool {
        self.0.write(bytes)
    }

    fn closed(&self) -> bool {
        self.0.closed
    }
}

pub fn stream(call: Call, id: &str, out: ResponseOutparam) {
    let format = StreamFormat::from_accept(call.header("accept"));
    let query = match eve_agent::protocol::stream_query(&call.query, call.header("last-event-id")) {
        Ok(q) => q,
        Err(r) => return send_refusal(out, &r),
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(r) => return send_refusal(out, &r),
    };
    let principal = call.principal.id.as_str();
    let opened = match stream::open(&db, principal, id, format, &query) {
        Ok(o) => o,
        Err(r) => return send_refusal(out, &r),
    };
    let mut body = Body(BodyWriter::start(out, 200, &opened.headers));
    match stream::serve(&Spin, &db, &opened, &mut body) {
        Served::Finish => body.0.finish(),
        // The reader went away; the work (if any) ran on regardless.
        Served::Gone => {}
    }
}

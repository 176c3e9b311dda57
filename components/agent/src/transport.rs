//! Outbound HTTP for the model providers over `wasi:http`: the response body is read as it
//! arrives, in polls of at most 250 ms so the turn can check for a stop in between.

use std::time::Duration;

use eve_agent::provider::{ByteStream, HttpRequest, Read, Transport};
use eve_spin::streaming::{self, Incoming};
use spin_sdk::http::Method;

/// How long a provider may take to answer with its response head.
const CONNECT_WAIT: Duration = Duration::from_secs(120);
/// One read's wait (see `eve_agent::provider::MAX_IDLE_POLLS`).
const POLL: Duration = Duration::from_millis(250);

pub struct WasiTransport;

struct Body(Incoming);

impl ByteStream for Body {
    fn read(&mut self) -> Result<Read, String> {
        Ok(match self.0.read(POLL)? {
            streaming::Read::Data(b) => Read::Data(b),
            streaming::Read::Idle => Read::Idle,
            streaming::Read::End => Read::End,
        })
    }
}

impl Transport for WasiTransport {
    fn post(
        &mut self,
        request: HttpRequest,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<(u16, Box<dyn ByteStream>), String> {
        let headers: Vec<(String, Vec<u8>)> = request
            .headers
            .into_iter()
            .map(|(k, v)| (k, v.into_bytes()))
            .collect();
        let incoming = streaming::send_with(
            Method::Post,
            &request.url,
            &headers,
            &request.body,
            CONNECT_WAIT,
            waiting,
        )?;
        Ok((incoming.status, Box::new(Body(incoming))))
    }
}

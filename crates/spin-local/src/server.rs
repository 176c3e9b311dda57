//! The HTTP listener: accepts connections, hands each request to the app, shuts down cleanly.

use crate::limits::ConnectionCounter;
use crate::runtime::{App, Origin};
use anyhow::{Context, Result};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long in-flight requests get to finish after Ctrl-C before the host exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Binds `listen`, with a clear message when the address is taken.
pub async fn bind(listen: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(listen).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            anyhow::anyhow!("cannot listen on {listen}: the address is already in use (another `spin up`/`spin-local up`?); pick another with --listen")
        } else {
            anyhow::anyhow!("cannot listen on {listen}: {e}")
        }
    })
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn serve(app: Arc<App>, listener: TcpListener) -> Result<()> {
    let local = listener.local_addr()?;
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot install SIGTERM handler")?;
    let tracker = tokio_util_tracker::Tracker::default();
    let connections = ConnectionCounter::new(app.limits.max_connections_per_address);
    let header_read_timeout = app.limits.header_read_timeout();
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of file descriptors and the like: keep serving the others.
                    eprintln!("spin-local: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => break,
            _ = sigterm.recv() => break,
        };
        let _ = stream.set_nodelay(true);
        let Some(permit) = connections.admit(peer.ip()) else {
            if app.log_requests {
                eprintln!(
                    "spin-local: {} has {} connections open (--max-connections-per-address); refused one",
                    peer.ip(),
                    app.limits.max_connections_per_address
                );
            }
            tokio::spawn(refuse(stream));
            continue;
        };
        let app = app.clone();
        let guard = tracker.enter();
        tokio::spawn(async move {
            let _guard = guard;
            let _permit = permit;
            let service =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let app = app.clone();
                    Box::pin(async move {
                        let authority = req
                            .headers()
                            .get(http::header::HOST)
                            .and_then(|h| h.to_str().ok())
                            .map(str::to_string)
                            .unwrap_or_else(|| local.to_string());
                        let origin = Origin {
                            scheme: "http",
                            authority,
                            client_addr: peer.to_string(),
                        };
                        Ok::<_, std::convert::Infallible>(app.handle_external(req, origin).await)
                    })
                });
            // A client that drops its connection mid-request is not an error worth printing.
            // The connection ends as Spin's does: a request body a component left unread is
            // not drained, so the close may reset the connection under the answer (a client
            // that writes a large refused body before it reads sees a broken pipe, as on
            // Spin; docs/local-host.md "Where this host differs from Spin").
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
    eprintln!("spin-local: shutting down");
    drop(listener);
    tracker.wait(SHUTDOWN_GRACE).await;
    Ok(())
}

/// Answers a connection over the per-address cap with 429 and closes it, without parsing
/// its request or starting a component; it gets a second in all, however slow the client.
async fn refuse(mut stream: tokio::net::TcpStream) {
    const BODY: &str = "too many connections from this address\n";
    let answer = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        // Closing with the request unread would reset the connection, and a reset can discard
        // the answer before the client reads it: drain what the client sent first.
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// Counts live connections so shutdown can wait for them (briefly).
mod tokio_util_tracker {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[derive(Default, Clone)]
    pub struct Tracker(Arc<AtomicUsize>);

    pub struct Guard(Arc<AtomicUsize>);

    impl Tracker {
        pub fn enter(&self) -> Guard {
            self.0.fetch_add(1, Ordering::SeqCst);
            Guard(self.0.clone())
        }
        pub async fn wait(&self, grace: Duration) {
            let deadline = tokio::time::Instant::now() + grace;
            while self.0.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

//! Component stdout/stderr, forwarded line by line with the component's name in front, so
//! interleaved output from concurrent requests stays readable.

use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

/// An `AsyncWrite` that prints complete lines as `[component] line`.
pub struct LinePrefixer {
    prefix: String,
    buf: Vec<u8>,
    to_stderr: bool,
}

/// Longest partial line kept before it is printed anyway.
const MAX_LINE: usize = 16 * 1024;

impl LinePrefixer {
    pub fn stdout(component: &str) -> Self {
        LinePrefixer {
            prefix: format!("[{component}] "),
            buf: Vec::new(),
            to_stderr: false,
        }
    }
    pub fn stderr(component: &str) -> Self {
        LinePrefixer {
            prefix: format!("[{component}] "),
            buf: Vec::new(),
            to_stderr: true,
        }
    }

    fn emit(&self, line: &[u8]) {
        let mut out = Vec::with_capacity(self.prefix.len() + line.len() + 1);
        out.extend_from_slice(self.prefix.as_bytes());
        out.extend_from_slice(line);
        out.push(b'\n');
        // Output that cannot be written (a closed terminal) is dropped, never fatal.
        let _ = if self.to_stderr {
            std::io::stderr().write_all(&out)
        } else {
            std::io::stdout().write_all(&out)
        };
    }

    fn drain_lines(&mut self) {
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=pos).collect();
            self.emit(&line[..line.len() - 1]);
        }
        if self.buf.len() > MAX_LINE {
            let line = std::mem::take(&mut self.buf);
            self.emit(&line);
        }
    }
}

impl tokio::io::AsyncWrite for LinePrefixer {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.buf.extend_from_slice(data);
        self.drain_lines();
        Poll::Ready(Ok(data.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for LinePrefixer {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.emit(&line);
        }
    }
}

//! Keeps the bytes a connection received since its last well-formed request, so that a
//! request hyper cannot parse (a bad request line, oversized or malformed headers, a slow
//! head) is still recorded raw instead of vanishing.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use std::time::Instant;

use chrono::Utc;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::draft::Draft;
use super::{AppState, ConnInfo};
use crate::trace::redact::{raw_head, redact_text};
use crate::trace::{Body, ExchangeError, HttpRequest};

/// Most bytes kept per connection: 64 KiB (hyper's head limit is smaller).
pub const KEEP: usize = 64 * 1024;

/// The bytes received since the last request the handler saw. Shared between the
/// connection's IO and its requests.
#[derive(Clone, Default, Debug)]
pub(crate) struct Recent(Arc<Mutex<Vec<u8>>>);

impl Recent {
    /// Forget what was received so far (a request was parsed).
    pub(crate) fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// What was received since the last clear (up to [`KEEP`] bytes).
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn push(&self, b: &[u8]) {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let room = KEEP.saturating_sub(v.len());
        v.extend_from_slice(&b[..b.len().min(room)]);
    }
}

/// An IO that copies what it reads into a [`Recent`].
pub(crate) struct Tee<T> {
    inner: T,
    recent: Recent,
}

impl<T> Tee<T> {
    pub(crate) fn new(inner: T, recent: Recent) -> Self {
        Tee { inner, recent }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Tee<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                self.recent.push(new);
            }
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tee<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Record what a connection sent that hyper could not parse as a request (bad request
/// line or headers, a head too large, a head too slow, a head cut off), raw.
pub(crate) fn record_unparsed(st: &AppState, conn: &ConnInfo, e: &hyper::Error) {
    let raw = conn.recent.take();
    if raw.iter().all(u8::is_ascii_whitespace) {
        return; // an idle keep-alive connection closed or timed out: nothing was sent
    }
    let kind = if e.is_parse_too_large() {
        "head_too_large"
    } else if e.is_parse() || e.is_parse_status() {
        "malformed_http"
    } else if e.is_timeout() {
        "head_timeout"
    } else {
        "incomplete_head"
    };
    let line = raw.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line).trim_end().to_string();
    let mut parts = line.splitn(3, ' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let n = raw.len();
    let request = HttpRequest {
        method: method.chars().take(32).collect(),
        target: redact_text(&target.chars().take(2048).collect::<String>()),
        version: String::new(),
        headers: Vec::new(),
        body: {
            let mut b = Body::new(raw_head(&raw)).with_truncated(true);
            b.redacted = true;
            b
        },
    };
    let draft = Draft::new(
        st,
        Some(conn),
        st.take_id(),
        Utc::now(),
        Instant::now(),
        request,
    );
    let message = format!("the connection sent {n} bytes that are not a valid HTTP/1.1 request ({e}); they are kept raw as the body, secrets redacted");
    draft.finish(
        None,
        Some(ExchangeError {
            kind: kind.into(),
            message,
        }),
    );
}

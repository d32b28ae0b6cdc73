//! A WASI output stream that forwards a plugin's stdout/stderr to `tracing`,
//! one event per line, tagged with the plugin, escaped and bounded by the
//! plugin's log allowance ([`crate::plugin_log`]).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use crate::plugin_log::{LogBudget, Origin};

/// Lines longer than this are split; keeps a plugin from building one
/// unbounded line in host memory.
const MAX_LINE: usize = 4096;

/// Sink for one stream (`stdout` or `stderr`) of one plugin.
#[derive(Clone)]
pub(crate) struct TracingStream {
    plugin: Arc<str>,
    stream: &'static str,
    pending: Arc<Mutex<Vec<u8>>>,
    budget: Arc<LogBudget>,
}

impl TracingStream {
    pub(crate) fn new(plugin: Arc<str>, stream: &'static str, budget: Arc<LogBudget>) -> Self {
        TracingStream {
            plugin,
            stream,
            pending: Arc::new(Mutex::new(Vec::new())),
            budget,
        }
    }

    fn emit(&self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.budget
            .write(&self.plugin, Origin::Stream(self.stream), line);
    }

    fn push(&self, bytes: &[u8]) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for &b in bytes {
            if b == b'\n' || pending.len() >= MAX_LINE {
                self.emit(&pending);
                pending.clear();
                if b == b'\n' {
                    continue;
                }
            }
            pending.push(b);
        }
    }
}

impl IsTerminal for TracingStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TracingStream {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for TracingStream {
    async fn ready(&mut self) {}
}

impl OutputStream for TracingStream {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(MAX_LINE)
    }
}

impl tokio::io::AsyncWrite for TracingStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

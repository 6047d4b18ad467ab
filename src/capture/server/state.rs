//! State shared by every connection of a running server ([`AppState`]), the facts of one
//! connection ([`ConnInfo`]), and the tracked connection tasks ([`Tasks`]).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use tokio::sync::Semaphore;

use super::config::ServerConfig;
use super::draft::{Draft, Origin};
use super::recorder::Recorder;
use super::script::ScriptState;
use super::tee::Recent;
use crate::trace::HttpRequest;

/// State shared by all connections.
pub(crate) struct AppState {
    pub(crate) config: ServerConfig,
    pub(crate) listen: SocketAddr,
    pub(crate) recorder: Recorder,
    pub(crate) next_id: AtomicU64,
    pub(crate) script_state: Mutex<ScriptState>,
    /// The connection tasks.
    pub(crate) tasks: Tasks,
    /// Request-body bytes that may be held at once, across connections (permits are
    /// bytes; see [`ServerConfig::max_inflight`]).
    pub(crate) bodies: Arc<Semaphore>,
    /// Turns true when the server shuts down (long-lived WebSocket sessions close then).
    pub(crate) stop: tokio::sync::watch::Receiver<bool>,
}

impl AppState {
    /// The next exchange number (arrival order).
    pub(crate) fn take_id(&self) -> u64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// A draft for a request on connection `conn` of this server, with exchange number
    /// `id` (from [`take_id`](Self::take_id) when the head arrived), started at
    /// `started_at` / `clock`.
    pub(crate) fn draft(
        &self,
        conn: Option<&ConnInfo>,
        id: u64,
        started_at: DateTime<Utc>,
        clock: Instant,
        request: HttpRequest,
    ) -> Draft {
        let origin = Origin {
            recorder: self.recorder.clone(),
            mode: self.config.mode.name(),
            listen: self.listen,
            conn: conn.map(|c| (c.peer, c.id)),
        };
        Draft::new(origin, id, started_at, clock, request)
    }
}

/// Per-connection facts, attached to every request as an extension.
#[derive(Clone, Debug)]
pub(crate) struct ConnInfo {
    pub(crate) peer: SocketAddr,
    pub(crate) id: u64,
    /// `host:port` the client asked for, when the connection came through a CONNECT.
    pub(crate) host: Option<Arc<str>>,
    /// Bytes received since the last request the handler saw.
    pub(crate) recent: Recent,
}

/// The tasks serving connections, and the signal that asks them to wind down.
#[derive(Default)]
pub(crate) struct Tasks {
    set: std::sync::Mutex<tokio::task::JoinSet<()>>,
}

impl Tasks {
    /// Run `fut` as a tracked task.
    pub(crate) fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        while set.try_join_next().is_some() {}
        set.spawn(fut);
    }

    /// Wait up to `grace` for every task to end by itself; then abort the rest and wait
    /// until they are gone (dropping their state records their open exchanges).
    pub(crate) async fn wind_down(&self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let left = {
                let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
                while set.try_join_next().is_some() {}
                set.len()
            };
            if left == 0 || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Abort every task and wait until all are gone.
    pub(crate) async fn abort_all(&self) {
        loop {
            let mut set = std::mem::take(&mut *self.set.lock().unwrap_or_else(|p| p.into_inner()));
            if set.is_empty() {
                break;
            }
            set.shutdown().await;
        }
    }
}

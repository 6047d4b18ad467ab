//! [`ViewerState`]: what the viewer's app serves (the index, the token and host names it
//! answers to, the live feed), shared by the app ([`super::server`]) and the live feed
//! ([`super::live`]).

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use tokio::sync::broadcast;

use crate::analyze::AnalyzeConfig;

use super::model::Model;
use super::security;

/// What the app serves: the index of the input (or of the live recording), the token and
/// the host names it answers to, and the live feed.
pub struct ViewerState {
    /// The token every request must carry ([`ViewerState::token`]).
    pub(super) token: String,
    /// The `Host` values answered ([`super::security::allowed_hosts`]).
    pub(super) hosts: Vec<String>,
    /// The index.
    pub model: RwLock<Model>,
    /// `analyze` settings (a live recording is re-analysed as it grows).
    pub cfg: AnalyzeConfig,
    /// Events for the pages (`turn`, `analysis`), as JSON text already redacted.
    pub events: broadcast::Sender<String>,
    /// The live index changed since it was last analysed.
    pub dirty: AtomicBool,
    /// True when the index grows as exchanges are recorded.
    pub live: bool,
}

impl ViewerState {
    /// The state of a viewer of `model` listening on `addr` (the address decides the
    /// `Host` values accepted), with a new random token.
    pub fn new(model: Model, addr: SocketAddr, cfg: AnalyzeConfig, live: bool) -> Arc<ViewerState> {
        Arc::new(ViewerState {
            token: security::new_token(),
            hosts: security::allowed_hosts(addr),
            model: RwLock::new(model),
            cfg,
            events: broadcast::channel(4096).0,
            dirty: AtomicBool::new(false),
            live,
        })
    }

    /// The token every request must carry.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The URL to open: `http://ADDR/?token=…`.
    pub fn url(&self, addr: SocketAddr) -> String {
        format!("http://{addr}/?token={}", self.token)
    }

    /// Read the model (a poisoned lock is still read: the index is append-only).
    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, Model> {
        self.model.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Write the model.
    pub fn write(&self) -> std::sync::RwLockWriteGuard<'_, Model> {
        self.model.write().unwrap_or_else(|e| e.into_inner())
    }
}

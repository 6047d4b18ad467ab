//! `agentwire view`: index an input, serve the conversation viewer on it until a signal,
//! and print its URL; and the live viewer that `serve --ui` starts beside the server.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use agentwire::viewer::{self, live, Model, ViewerState};

use super::io::{print_stdout, runtime};
use crate::cli::{config, ViewArgs};

pub(super) fn view(a: ViewArgs) -> Result<ExitCode> {
    let cfg = config::analysis(&a.settings)?;
    let started = std::time::Instant::now();
    let model = viewer::open(&a.input, cfg.clone())?;
    let (turns, bad) = (model.turns.len(), model.problems.len());
    for p in model.problems.iter().take(3) {
        warn!(
            "{}: line {} (byte {}): {}",
            a.input.display(),
            p.line,
            p.offset,
            p.message
        );
    }
    if bad > 3 {
        warn!(
            "{}: {} more unreadable lines (the viewer marks them all)",
            a.input.display(),
            bad - 3
        );
    }
    runtime()?.block_on(async move {
        let listener = bind(a.bind).await?;
        let addr = listener.local_addr()?;
        let st = ViewerState::new(model, addr, cfg, false);
        let url = st.url(addr);
        print_stdout(&format!("{url}\n"))?;
        message!(
            "agentwire: viewing {} ({turns} exchanges, indexed in {} ms); Ctrl-C to stop",
            a.input.display(),
            started.elapsed().as_millis()
        );
        if a.open {
            open_browser(&url);
        }
        serve(listener, st).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Listen on `addr`, warning when it is not loopback.
pub(super) async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener> {
    if !addr.ip().is_loopback() {
        warn!("the viewer listens on {addr}, reachable from other machines: anyone with its URL (token included) can read the trace");
    }
    tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        anyhow::anyhow!("cannot listen on {addr}: {e}; pick another address or port 0")
    })
}

/// Serve the viewer until Ctrl-C.
async fn serve(listener: tokio::net::TcpListener, st: Arc<ViewerState>) -> Result<()> {
    let stop = agentwire::capture::record::interrupted();
    axum::serve(listener, viewer::app(st))
        .with_graceful_shutdown(stop)
        .await?;
    Ok(())
}

/// Start the live viewer of a recording to `trace` fed by `rx`; returns its URL.
pub(super) async fn start_live(
    trace: &Path,
    rx: tokio::sync::broadcast::Receiver<Arc<agentwire::trace::Exchange>>,
) -> Result<String> {
    let (url, st) = live_viewer(trace).await?;
    tokio::spawn(live::follow(st, rx));
    Ok(url)
}

/// Serve an empty live viewer of a recording to `trace` on 127.0.0.1 (re-analysed as it
/// grows); returns its URL and its state, for [`live::follow`] to feed.
pub(super) async fn live_viewer(trace: &Path) -> Result<(String, Arc<ViewerState>)> {
    let listener = bind("127.0.0.1:0".parse()?).await?;
    let addr = listener.local_addr()?;
    let st = ViewerState::new(Model::new(trace), addr, Default::default(), true);
    tokio::spawn(live::analyse_while_live(st.clone()));
    let url = st.url(addr);
    let app = viewer::app(st.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, st))
}

/// Open `url` in the default browser; a failure is a warning.
fn open_browser(url: &str) {
    let cmd = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(cmd)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        warn!("cannot open a browser with {cmd} ({e}); open the URL above yourself");
    }
}

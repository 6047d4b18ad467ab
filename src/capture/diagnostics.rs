//! How a source reports what the user should hear while it runs (a server that cannot
//! write its trace, an MCP server left unrecorded, an interrupted recording): through a
//! [`Diagnostics`] its caller injects (bandwhich's injected I/O), never by printing. The
//! library does not print; the binary passes in its one diagnostics sink, which redacts,
//! filters and prints each line. The default reporter discards everything (a library
//! caller that wants the lines passes [`Diagnostics::new`]).

use std::sync::Arc;

/// How a diagnostic is meant: the binary prints each level with its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something failed (`error: …`).
    Error,
    /// Something went wrong and the run goes on (`warning: …`).
    Warning,
    /// Worth knowing (`note: …`).
    Note,
    /// A status line, printed as it is; it names its speaker itself (`agentwire: …`),
    /// since it may appear among the recorded program's own output.
    Status,
}

/// The function a reporter calls with each diagnostic.
type Report = dyn Fn(Level, &str) + Send + Sync;

/// A reporter for a source's diagnostics: a function of the level and the text, shared
/// by every task and thread of the source. Cheap to clone. The text is as the source
/// wrote it (it may quote recorded values): a reporter that prints must filter it.
#[derive(Clone, Default)]
pub struct Diagnostics(Option<Arc<Report>>);

impl Diagnostics {
    /// A reporter that hands each diagnostic to `f`.
    pub fn new(f: impl Fn(Level, &str) + Send + Sync + 'static) -> Self {
        Diagnostics(Some(Arc::new(f)))
    }

    /// A reporter that discards everything (the default).
    pub fn silent() -> Self {
        Diagnostics(None)
    }

    /// Report `msg` at `level`.
    pub fn report(&self, level: Level, msg: &str) {
        if let Some(f) = &self.0 {
            f(level, msg);
        }
    }

    /// Report `msg` as a [`Level::Warning`].
    pub fn warn(&self, msg: &str) {
        self.report(Level::Warning, msg);
    }

    /// Report `msg` as a [`Level::Error`].
    pub fn error(&self, msg: &str) {
        self.report(Level::Error, msg);
    }

    /// Report `msg` as a [`Level::Status`] line.
    pub fn status(&self, msg: &str) {
        self.report(Level::Status, msg);
    }
}

impl std::fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Diagnostics(reporter)"
        } else {
            "Diagnostics(silent)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_reporter_gets_each_level_and_text_and_the_default_discards() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let d = Diagnostics::new(move |l, m| s.lock().unwrap().push((l, m.to_string())));
        d.warn("w");
        d.clone().status("agentwire: s");
        d.error("e");
        assert_eq!(
            *seen.lock().unwrap(),
            [
                (Level::Warning, "w".to_string()),
                (Level::Status, "agentwire: s".to_string()),
                (Level::Error, "e".to_string())
            ]
        );
        Diagnostics::default().warn("nowhere");
        assert_eq!(
            format!("{:?}", Diagnostics::silent()),
            "Diagnostics(silent)"
        );
    }
}

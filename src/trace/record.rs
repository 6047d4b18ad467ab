//! The records a trace is made of, as every reader hands them out: a header, an exchange,
//! an MCP record, a record of a type this build does not model, or a line that could not be
//! read ([`ReadProblem`], kept raw with where it was). Readers of every input format (the
//! JSON Lines reader here, the input layer's importers and packet captures) produce these.

use super::{Context, Exchange, McpRecord};

/// One line of a trace.
#[derive(Debug)]
pub enum Record {
    /// A header: format version and the context for the exchanges that follow.
    Header {
        /// Format version of the writer.
        version: u32,
        /// Recording context.
        context: Context,
    },
    /// One exchange.
    Exchange(Box<Exchange>),
    /// One MCP message or MCP server event.
    Mcp(Box<McpRecord>),
    /// A record of a type this reader does not model (kept whole).
    Other(serde_json::Value),
    /// A line that could not be parsed, kept raw.
    Bad(ReadProblem),
}

/// A line that could not be read as a record.
#[derive(Debug, Clone)]
pub struct ReadProblem {
    /// Line number, from 1; 0 for an input that is not line-based (a packet capture).
    pub line: u64,
    /// Byte offset of the line's start in the file.
    pub offset: u64,
    /// True when this is the last line and it has no newline: a write cut short.
    pub truncated: bool,
    /// The parser's message.
    pub message: String,
    /// The line's bytes, without the newline.
    pub raw: Vec<u8>,
    /// The file the line is in, when the input is a directory (`dir/sub/file.jsonl`);
    /// `None`: the input as named.
    pub file: Option<std::path::PathBuf>,
}

impl ReadProblem {
    /// The problem as a warning names it: `FILE: line N (byte M): …`, where FILE is the
    /// file it is in ([`ReadProblem::file`], else `input`); a message that already starts
    /// with that name (imports and captures name their file) is not named twice.
    pub fn located(&self, input: &str) -> String {
        let file = self
            .file
            .as_ref()
            .map_or_else(|| input.to_string(), |f| f.display().to_string());
        let text = self.to_string();
        if text.starts_with(&format!("{file}: ")) {
            text
        } else {
            format!("{file}: {text}")
        }
    }
}

impl std::fmt::Display for ReadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            // not line-based (a packet capture): the message names the file and byte
            f.write_str(&self.message)
        } else if self.truncated {
            write!(
                f,
                "line {} (byte {}): last line is truncated after {} bytes (the writer stopped mid-record); it was skipped",
                self.line,
                self.offset,
                self.raw.len()
            )
        } else {
            write!(
                f,
                "line {} (byte {}): not a trace record: {}",
                self.line, self.offset, self.message
            )
        }
    }
}

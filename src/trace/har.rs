//! HTTP Archive (HAR) 1.2: the document model, tolerant on input (every field optional,
//! unknown fields ignored). Written by the export ([`super::export`]) and read by the HAR
//! import (`crate::import::har`), which sits above `trace`.
//!
//! Source: the HAR 1.2 specification (W3C Web Performance WG draft, "HTTP Archive (HAR)
//! format", 2012). Times are in milliseconds; −1 means not applicable.

use serde::{Deserialize, Serialize};

/// A HAR document.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Har {
    /// The log.
    pub log: Log,
}

/// `log`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Log {
    /// Format version (`1.2`).
    #[serde(default)]
    pub version: String,
    /// The writing tool.
    #[serde(default)]
    pub creator: Creator,
    /// Exchanges in order.
    #[serde(default)]
    pub entries: Vec<Entry>,
}

/// `log.creator`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Creator {
    /// Tool name.
    #[serde(default)]
    pub name: String,
    /// Tool version.
    #[serde(default)]
    pub version: String,
}

/// One entry: a request and its response.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Entry {
    /// Start of the request (ISO 8601).
    #[serde(rename = "startedDateTime", default)]
    pub started_date_time: String,
    /// Total time in milliseconds.
    #[serde(default)]
    pub time: f64,
    /// The request.
    #[serde(default)]
    pub request: Request,
    /// The response (`status` 0 when there was none).
    #[serde(default)]
    pub response: Response,
    /// Cache state (always empty from agentwire).
    #[serde(default)]
    pub cache: serde_json::Map<String, serde_json::Value>,
    /// Phase durations in milliseconds.
    #[serde(default)]
    pub timings: Timings,
    /// Server IP address.
    #[serde(
        rename = "serverIPAddress",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_ip_address: Option<String>,
    /// Connection id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// Free text (agentwire writes the error of an exchange that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// A header, cookie or query parameter.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct NameValue {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Value.
    #[serde(default)]
    pub value: String,
}

/// `request`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Request {
    /// Method.
    #[serde(default)]
    pub method: String,
    /// Absolute URL.
    #[serde(default)]
    pub url: String,
    /// `HTTP/1.1`, `h2`, ...
    #[serde(rename = "httpVersion", default)]
    pub http_version: String,
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<NameValue>,
    /// Headers in order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// Query parameters.
    #[serde(rename = "queryString", default)]
    pub query_string: Vec<NameValue>,
    /// The body.
    #[serde(rename = "postData", default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<PostData>,
    /// Header bytes (−1: unknown).
    #[serde(rename = "headersSize", default = "unknown")]
    pub headers_size: i64,
    /// Body bytes (−1: unknown).
    #[serde(rename = "bodySize", default = "unknown")]
    pub body_size: i64,
}

/// `request.postData`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PostData {
    /// MIME type.
    #[serde(rename = "mimeType", default)]
    pub mime_type: String,
    /// The body text.
    #[serde(default)]
    pub text: Option<String>,
    /// `base64` when `text` is base64 (an extension to 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `response`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Response {
    /// Status code; 0 when no response was received. Read as any JSON value, so an entry
    /// whose status is a string, a float or null keeps its request and response (the
    /// value is checked by `status_code`, which names a bad one in `source.missing`).
    #[serde(default)]
    pub status: serde_json::Value,
    /// Reason phrase.
    #[serde(rename = "statusText", default)]
    pub status_text: String,
    /// Protocol version.
    #[serde(rename = "httpVersion", default)]
    pub http_version: String,
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<NameValue>,
    /// Headers in order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// The body.
    #[serde(default)]
    pub content: Content,
    /// Redirect target.
    #[serde(rename = "redirectURL", default)]
    pub redirect_url: String,
    /// Header bytes (−1: unknown).
    #[serde(rename = "headersSize", default = "unknown")]
    pub headers_size: i64,
    /// Body bytes as transferred (−1: unknown).
    #[serde(rename = "bodySize", default = "unknown")]
    pub body_size: i64,
}

/// `response.content`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Content {
    /// Decoded body size in bytes.
    #[serde(default)]
    pub size: i64,
    /// Bytes saved by compression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<i64>,
    /// MIME type.
    #[serde(rename = "mimeType", default)]
    pub mime_type: String,
    /// The body (decoded text, or base64 when `encoding` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `base64` for binary bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `timings`, in milliseconds (−1: not applicable).
#[derive(Debug, Serialize, Deserialize)]
pub struct Timings {
    /// Queued.
    #[serde(default = "unknown_f")]
    pub blocked: f64,
    /// DNS lookup.
    #[serde(default = "unknown_f")]
    pub dns: f64,
    /// TCP connect.
    #[serde(default = "unknown_f")]
    pub connect: f64,
    /// Sending the request.
    #[serde(default)]
    pub send: f64,
    /// Waiting for the first response byte.
    #[serde(default)]
    pub wait: f64,
    /// Receiving the response.
    #[serde(default)]
    pub receive: f64,
    /// TLS handshake.
    #[serde(default = "unknown_f")]
    pub ssl: f64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            blocked: -1.0,
            dns: -1.0,
            connect: -1.0,
            send: 0.0,
            wait: 0.0,
            receive: 0.0,
            ssl: -1.0,
        }
    }
}

fn unknown() -> i64 {
    -1
}

fn unknown_f() -> f64 {
    -1.0
}

//! Host names in one form, so every comparison of hosts (an intercepted CONNECT target
//! against the listed hosts, an absolute-form request target against the proxy's
//! upstream) agrees: [`canonical_host`].

/// A host name or address in the one form every host comparison uses: lowercase, without
/// IPv6 brackets and trailing dots, IP addresses in their standard text form
/// (`API.Anthropic.com.` → `api.anthropic.com`, `[0:0::1]` → `::1`). Host names are
/// case-insensitive (RFC 3986 §3.2.2).
pub fn canonical_host(host: &str) -> String {
    let h = host.trim();
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    let h = h.trim_end_matches('.').to_ascii_lowercase();
    match h.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => h,
    }
}

//! Gemini's implicit prompt cache, as the simulation needs it. Source: Google, "Context
//! caching" (<https://ai.google.dev/gemini-api/docs/caching>, the page last updated
//! 2026-10-13, read 2026-12-02 through the project's search tool):
//!
//! - implicit caching is on by default for Gemini 2.5 and newer models; nothing in the
//!   request asks for it or names an entry (no breakpoint, no key), and Gemini CLI sends
//!   none (`../shared/agents.md` §2.2);
//! - a hit is a request whose opening *prefix* matches a recent request's; the hit
//!   tokens are reported as `usageMetadata.cachedContentTokenCount` and billed at the
//!   context-caching rate (about 10% of input: [`super::prices`]); writes are not billed;
//! - minimum input for caching, per model: 4,096 tokens for Gemini 4 Argon, 3.8, 3.7,
//!   3.6 and 3.5 Flash and 3.1 Pro Preview; 2,048 for Gemini 2.5 Flash and 2.5 Pro
//!   ([`min_cacheable`]).
//!
//! Where the page is silent agentwire assumes, and `docs/analyze.md` says so: the prefix
//! is rendered tools → `systemInstruction` → `contents` (the order of a request's own
//! fields in the API reference), an idle implicit entry lives 5 minutes (the page promises
//! no lifetime; "send requests with similar prefix in a short amount of time"), and hits
//! are not rounded to increments (none are documented).

/// Minimum cacheable prompt of models the page lists from Gemini 3 on, and of Gemini
/// models it does not list (the newer figure), in tokens.
pub const MIN_CACHEABLE: u64 = 4096;

/// Minimum cacheable prompt of the Gemini 2.5 models, tokens.
pub const MIN_CACHEABLE_2_5: u64 = 2048;

/// The minimum cacheable prompt of `model` in tokens (see the module header): 2,048 for
/// `gemini-2.5-…`, else 4,096.
pub fn min_cacheable(model: &str) -> u64 {
    let m = model
        .trim()
        .trim_start_matches("models/")
        .to_ascii_lowercase();
    if m.starts_with("gemini-2.5") {
        MIN_CACHEABLE_2_5
    } else {
        MIN_CACHEABLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimums_follow_the_model_family() {
        assert_eq!(min_cacheable("gemini-3.8-flash"), 4096);
        assert_eq!(min_cacheable("gemini-3.1-pro-preview"), 4096);
        assert_eq!(min_cacheable("models/gemini-2.5-flash"), 2048);
        assert_eq!(min_cacheable("gemini-2.5-pro"), 2048);
    }
}

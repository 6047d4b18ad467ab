//! The glossary of the shareable reports: every label a report shows (table headers,
//! figure names, tool states, statuses, cache causes) with a plain-words explanation.
//! Reports print the entries for the labels they use; a label without an entry is a bug
//! caught by the tests ([`lookup`] returns `None`).

use serde::Serialize;

/// One glossary entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The label as a report shows it.
    pub term: &'static str,
    /// What it means.
    pub meaning: &'static str,
}

/// Every label, in the order glossaries list them.
pub const ENTRIES: &[(&str, &str)] = &[
    ("A", "the old side of the comparison (the first input)"),
    ("B", "the new side of the comparison (the second input)"),
    ("delta", "B minus A"),
    ("%", "the delta as a share of A"),
    ("figure", "a measured quantity"),
    ("value", "the figure's value"),
    ("tool definitions", "tools whose full definition (name, description, input schema) is sent in the request's `tools` array"),
    ("loaded tools", "tool definitions sent without `defer_loading`: in the prompt and its cached prefix"),
    ("deferred tools", "tools the model loads on demand through ToolSearch, as Claude Code counts them: names announced in a deferred-tools listing and definitions sent with `defer_loading: true`, placeholders left out"),
    ("announced for ToolSearch", "tool names listed in a deferred-tools listing (a `system`-role message or `<available-deferred-tools>`) for ToolSearch, whether or not a definition is also sent"),
    ("deferred definitions", "tool definitions sent with `defer_loading: true` that name a real tool: kept out of the model's context and the cached prefix until ToolSearch loads them"),
    ("placeholders", "`defer_loading` definitions that stand for no tool (Claude Code's `DeferredToolPlaceholder` keeps deferred loading active)"),
    ("tool bytes", "size of the `tools` array as sent, in bytes"),
    ("system bytes", "size of the `system` prompt as sent, in bytes"),
    ("messages bytes", "size of the `messages` array (the conversation so far) as sent, in bytes"),
    ("body bytes", "size of the whole request body as sent, in bytes"),
    ("est. tokens", "estimated input tokens: body bytes / 4, rounded up (the API's count differs by tokenizer)"),
    ("tool", "a tool's name"),
    ("status", "for a tool, what happened to it between A and B; for a request, its cache outcome (cold, hit, partial, miss, uncached); for a parameter, same or changed"),
    ("A state", "how A sends the tool: loaded, deferred definition, placeholder, announced (name only, for ToolSearch), or - (absent)"),
    ("B state", "how B sends the tool, as for A state"),
    ("A bytes", "bytes in A (of the tool definition, or the system block)"),
    ("B bytes", "bytes in B"),
    ("loaded", "the tool's definition is sent without `defer_loading`: in the prompt"),
    ("deferred definition", "the definition is sent with `defer_loading: true`: loaded on demand"),
    ("placeholder", "a `defer_loading` definition that stands for no tool"),
    ("announced", "only the name is sent, in a deferred-tools listing for ToolSearch"),
    ("-", "absent, or not known"),
    ("added", "new in B"),
    ("removed", "gone in B"),
    ("moved behind ToolSearch", "loaded in A; in B announced or sent as a deferred definition, loaded when the model asks ToolSearch for it"),
    ("brought back", "deferred in A (announced or a deferred definition); loaded in B"),
    ("brought back from deferred", "deferred in A (announced or a deferred definition); loaded in B"),
    ("newly announced", "announced for ToolSearch in B, absent in A"),
    ("no longer announced", "announced in A, absent in B"),
    ("fetched by ToolSearch", "announced in A; in B its definition is sent with `defer_loading` (what the client does after ToolSearch returned a reference to it)"),
    ("unfetched", "a deferred definition in A; only announced in B"),
    ("changed", "sent on both sides with a different definition (description, input schema, other members), or turned from loaded into a placeholder or back"),
    ("same", "identical after normalization"),
    ("block", "a `system` prompt block, numbered from 0"),
    ("cache_control", "the block's cache breakpoint (`cache_control`): the cached prefix ends after it"),
    ("property", "an input-schema property path (`edits[].old_string`; `(schema)` is the root)"),
    ("change", "what changed at the property: added, removed, required_added, required_removed, or the keyword whose value changed (type, enum, default, description, …)"),
    ("type", "the property's JSON Schema type"),
    ("enum", "the values the property may take"),
    ("default", "the value used when the property is not given"),
    ("description", "the text the model reads about the property"),
    ("header", "an HTTP request header"),
    ("key", "a top-level request parameter"),
    ("rule", "a normalization rule: volatile values (ids, dates, paths, token budgets) it replaced by a placeholder before comparing"),
    ("hides", "what the normalization rule masks"),
    ("anthropic-beta", "beta features the client asks for, in the `anthropic-beta` header"),
    ("openai-beta", "OpenAI beta features the client asks for, in the `openai-beta` header (Codex: `responses_websockets=…`)"),
    ("x-codex-beta-features", "Codex's own feature flags, a comma list in the `x-codex-beta-features` header"),
    ("system reminder", "a `<system-reminder>` text the client injects into the conversation"),
    ("requests", "Messages API requests analysed"),
    ("sessions", "separate runs of the client, identified by the session id the client sends (header or `metadata.user_id`), else by input and conversation"),
    ("session", "the run a row belongs to: s1, s2, … in order of first appearance"),
    ("threads", "conversations: the main one, subagents and side calls, found from shared message prefixes"),
    ("thread", "main (first conversation with tools), sub-N (subagents), side-N (calls without tools: titles, summaries); prefixed by the session (s2/main) when the inputs hold several"),
    ("polls", "tool calls that ask for the state of something already asked (a background job's output, a status)"),
    ("redundant polls", "polls whose answer was the same as the previous poll's (nothing new learnt); each triggered a model call"),
    ("redundant", "redundant polls of the row"),
    ("wasted tokens", "tokens of the model calls triggered by redundant polls"),
    ("wasted $", "cost of the model calls triggered by redundant polls, USD"),
    ("cache hit rate", "cache-read tokens / all input tokens"),
    ("cache read", "input tokens served from the prompt cache (billed at about a tenth of input)"),
    ("cache write", "input tokens written to the prompt cache (billed at 1.25× input for the 5-minute TTL, 2× for 1 hour)"),
    ("uncached", "input tokens neither read from nor written to the cache"),
    ("output", "output tokens"),
    ("miss tokens", "prefix tokens that could have been read from the cache but were not"),
    ("extra cost", "what the misses cost beyond cache reads, USD"),
    ("part", "a part of the cost attribution, in which every dollar is counted once: useful work, redundant polls (less their calls' miss extras), each miss cause's extra, unattributed usage"),
    ("share", "the part's share of the total cost"),
    ("contains", "what the part's dollars are"),
    ("cost", "priced at the table's rates, USD; unpriced for a model the price table lacks"),
    ("total cost", "all priced requests at the table's rates, USD (`+ unpriced` when some requests' models are not in the table)"),
    ("unpriced", "the model is not in the price table: no cost is computed, and the request is left out of every cost figure"),
    ("cause", "why a request missed the prompt cache"),
    ("detail", "the specifics of the cause (gap and TTL, tools changed, block, …)"),
    ("cold_start", "the first request of a prefix: nothing to read yet (not counted as a miss)"),
    ("ttl_expired", "the gap since the last use of the prefix was longer than its TTL"),
    ("tools_changed", "the tool definitions changed, so the cached prefix no longer matches"),
    ("system_changed", "the system prompt changed before the breakpoint"),
    ("history_rewritten", "an earlier message changed (compaction, edits)"),
    ("model_changed", "a different model has its own cache"),
    ("params_changed", "a parameter that keys the cache changed"),
    ("below_minimum", "the prefix is shorter than the model's minimum cacheable length"),
    ("no_breakpoint", "the request sets no cache breakpoint"),
    ("cache_key_changed", "the request was routed to another cache: its prompt_cache_key (OpenAI) differs from the reference's"),
    ("lookback_exceeded", "the breakpoint is too far after the last cached block to be found"),
    ("unexplained", "recorded usage shows a miss the simulation does not explain"),
    ("TTL", "how long a cached prefix lives after its last use: 5 minutes by default, 1 hour on request"),
    ("#", "the exchange id in its trace (FILE#N when several files were read): the N that show lists and diff FILE#N and prompt FILE#N take"),
    ("time", "when the request started (UTC)"),
    ("usage", "recorded (the response's usage) or simulated (agentwire's cache simulation)"),
    ("read", "cache-read tokens"),
    ("write", "cache-write tokens"),
    ("input", "all input tokens: uncached + cache read + cache write"),
    ("hit rate", "cache-read tokens / input tokens"),
    ("miss cost", "extra cost of the misses, USD"),
    ("pred read", "cache-read tokens agentwire's cache simulation predicted (shown where the responses recorded cache figures)"),
    ("pred write", "cache-write tokens the simulation predicted"),
    ("agrees", "whether the prediction agrees with the recorded figures: the same hit or miss, and a read share within 10 points"),
    ("kind", "same_call (the same tool call repeated), task_output (reading a background task's output), shell_inspect (a shell command inspecting a job's files)"),
    ("target", "what the polls ask about (a call, a task, a file)"),
    ("job", "the background job the row belongs to"),
    ("after notif.", "polls after the job's completion was already notified"),
    ("pending", "polls while a completion notification was waiting to be delivered"),
    ("interval s", "mean seconds between polls"),
    ("job s", "seconds from the job's start to its notification"),
    ("tokens", "input + output tokens"),
    ("state", "the job's last known state"),
    ("exit", "the job's exit code, if reported"),
    ("started", "when the job started"),
    ("notified", "when its completion was notified"),
    ("duration s", "seconds from start to notification"),
    ("duplicate of", "an earlier job that ran the same command"),
    ("artifact", "the file the job wrote its output to"),
    ("decision", "keep, investigate or retry, from the job's state and acceptance"),
    ("acceptance", "whether the job's result passes its acceptance check (pass, fail, unknown)"),
    ("unresolved", "a fact the records leave open (e.g. the assistant claimed success before the job finished)"),
    ("version", "a published client version"),
    ("tools", "tool definitions sent in the first main-thread request"),
    ("betas", "beta feature names the client sends in its provider's beta header: `anthropic-beta` (Anthropic), `openai-beta` and Codex's `x-codex-beta-features` (OpenAI); the Gemini API has none (`-`); unknown when the headers were not recorded"),
    ("changes", "what changed from the previous version, with a link to the pairwise diff"),
    ("recorded", "where the recording came from: cache (an earlier run) or new"),
];

/// The entry for `term`, if the glossary has one.
pub fn lookup(term: &str) -> Option<Entry> {
    ENTRIES
        .iter()
        .find(|(t, _)| *t == term)
        .map(|(term, meaning)| Entry { term, meaning })
}

/// Entries for `terms` (duplicates and unknown terms left out), in glossary order.
pub fn for_terms<'a>(terms: impl IntoIterator<Item = &'a str>) -> Vec<Entry> {
    let wanted: Vec<&str> = terms.into_iter().collect();
    ENTRIES
        .iter()
        .filter(|(t, _)| wanted.contains(t))
        .map(|(term, meaning)| Entry { term, meaning })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn terms_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for (t, _) in super::ENTRIES {
            assert!(seen.insert(t), "{t} listed twice");
        }
    }
}

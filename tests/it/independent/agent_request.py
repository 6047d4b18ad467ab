#!/usr/bin/env python3
"""An independent reader of one model request of an agentwire trace, whatever agent sent
it, for the cross-agent matrix test: written apart from agentwire's Rust code, with the
Python standard library. It knows the four wire formats (Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions, Gemini generateContent) only from their public API
references.

usage: agent_request.py TRACE EXCHANGE_ID

Prints one JSON object for exchange EXCHANGE_ID: the provider its path belongs to
(`anthropic` for /v1/messages, `openai` for .../responses and .../chat/completions,
`google` for /models/MODEL:generateContent or :streamGenerateContent), the path, whether
the compact re-serialization of the stored body has the stored SHA-256 (then every byte
count is a count of the bytes that crossed the wire), the body's bytes, the number of
tools (Responses namespaces flattened; Gemini: every functionDeclaration), the bytes of
the tool definitions as sent (Messages, Responses, Chat Completions: the `tools` array,
plus Responses `additional_tools` items' arrays; Gemini: `tools`), the bytes of the system
prompt (Messages: `system`; Responses: the developer/system items that open `input`,
`additional_tools` items skipped (they are tools);
Chat Completions: the system/developer messages that open `messages`; Gemini:
`systemInstruction`), and the beta names of the provider's beta headers (Anthropic
`anthropic-beta`; OpenAI `openai-beta` and `x-codex-beta-features`; Google none), comma
lists split and trimmed, in order, each once; `null` when no header was recorded. And
`model_requests`: how many exchanges of the whole trace are POSTs to one of those paths.
"""
import hashlib
import json
import re
import sys

GEMINI = re.compile(r"/models/[^/:?]+:(generateContent|streamGenerateContent)$")


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def provider(path):
    if path == "/v1/messages":
        return "anthropic"
    if path.endswith("/responses") or path.endswith("/chat/completions"):
        return "openai"
    if GEMINI.search(path):
        return "google"
    return None


def opening(items):
    total = 0
    for item in items:
        if item.get("type") == "additional_tools":
            continue  # tool definitions (counted as tools), not prompt text
        if item.get("role") not in ("system", "developer"):
            break
        total += len(compact(item))
    return total


def count_tools(path, v):
    if GEMINI.search(path):
        return sum(len(t.get("functionDeclarations") or []) for t in v.get("tools") or [])
    entries = list(v.get("tools") or [])
    if path.endswith("/responses"):
        for item in v.get("input") or []:
            if item.get("type") == "additional_tools":
                entries.extend(item.get("tools") or [])
        flat = 0
        for t in entries:
            if t.get("type") == "namespace" and isinstance(t.get("tools"), list):
                flat += len(t["tools"])
            else:
                flat += 1
        return flat
    return len(entries)


def tool_bytes(path, v):
    total = len(compact(v["tools"])) if "tools" in v else 0
    if path.endswith("/responses"):
        for item in v.get("input") or []:
            if item.get("type") == "additional_tools" and "tools" in item:
                total += len(compact(item["tools"]))
    return total


def system_bytes(path, v):
    if path == "/v1/messages":
        return len(compact(v["system"])) if "system" in v else 0
    if path.endswith("/responses"):
        return opening(v.get("input") or [])
    if path.endswith("/chat/completions"):
        return opening(v.get("messages") or [])
    return len(compact(v["systemInstruction"])) if "systemInstruction" in v else 0


def betas(prov, headers):
    if not headers:
        return None
    fields = {"anthropic": ["anthropic-beta"],
              "openai": ["openai-beta", "x-codex-beta-features"]}.get(prov, [])
    out = []
    for name, value in headers:
        if name.lower() in fields:
            for b in value.split(","):
                b = b.strip()
                if b and b not in out:
                    out.append(b)
    return out


def path_of(req):
    target = req.get("target", "")
    if "://" in target:
        target = "/" + target.split("://", 1)[1].split("/", 1)[1]
    return target.split("?")[0]


def main():
    path, wanted = sys.argv[1], int(sys.argv[2])
    records = [json.loads(line) for line in open(path, encoding="utf-8")]
    exchanges = [r for r in records if r.get("type") == "exchange"]
    model = sum(1 for r in exchanges
                if r["request"].get("method") == "POST" and provider(path_of(r["request"])))
    for rec in exchanges:
        if rec.get("id") != wanted:
            continue
        req = rec["request"]
        p = path_of(req)
        prov = provider(p)
        v = req["body"]["json"]
        raw = compact(v)
        json.dump({
            "provider": prov,
            "path": p,
            "sha256_matches": hashlib.sha256(raw).hexdigest() == req["body"]["sha256"],
            "body_bytes": len(raw),
            "tools": count_tools(p, v),
            "tools_bytes": tool_bytes(p, v),
            "system_bytes": system_bytes(p, v),
            "betas": betas(prov, req.get("headers") or []),
            "model_requests": model,
        }, sys.stdout)
        return
    sys.exit(f"no exchange {wanted} in {path}")


main()

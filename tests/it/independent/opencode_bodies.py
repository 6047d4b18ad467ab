#!/usr/bin/env python3
"""An independent reader of the model requests in an agentwire trace of opencode, for the
opencode tests: written apart from agentwire's Rust code, with the Python standard library.
It knows the three wire formats opencode's providers use (Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions) only from their public API references.

usage: opencode_bodies.py TRACE

Prints one JSON array, one object per model request in trace order: the exchange id, the
path, whether the compact re-serialization of the stored body has the stored SHA-256
(then every byte count is a count of the bytes that crossed the wire), the body's bytes,
the tool names, the bytes of the `tools` array, the bytes of the system prompt (Messages:
the `system` value; Responses: the developer/system items that open `input`; Chat
Completions: the system/developer messages that open `messages`), and the tool calls the
request's history holds as [name, arguments] pairs.
"""
import hashlib
import json
import sys

PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions")


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def tool_name(path, t):
    if path == "/v1/chat/completions":
        return (t.get("function") or {}).get("name", "")
    return t.get("name", "")


def opening_system(items, roles=("system", "developer")):
    total = 0
    for item in items:
        if item.get("role") not in roles:
            break
        total += len(compact(item))
    return total


def system_bytes(path, v):
    if path == "/v1/messages":
        return len(compact(v["system"])) if "system" in v else 0
    if path == "/v1/responses":
        return opening_system(v.get("input") or [])
    return opening_system(v.get("messages") or [])


def calls(path, v):
    out = []
    if path == "/v1/messages":
        for m in v.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if b.get("type") == "tool_use":
                    out.append([b["name"], b.get("input")])
    elif path == "/v1/responses":
        for item in v.get("input") or []:
            if item.get("type") == "function_call":
                out.append([item["name"], json.loads(item.get("arguments") or "{}")])
    else:
        for m in v.get("messages") or []:
            for c in m.get("tool_calls") or []:
                f = c["function"]
                out.append([f["name"], json.loads(f.get("arguments") or "{}")])
    return out


def main():
    out = []
    for line in open(sys.argv[1], encoding="utf-8"):
        rec = json.loads(line)
        if rec.get("type") != "exchange":
            continue
        req = rec["request"]
        path = req.get("target", "").split("?")[0]
        if path not in PATHS:
            continue
        body = req["body"]
        v = body["json"]
        raw = compact(v)
        tools = v.get("tools") or []
        out.append({
            "id": rec["id"],
            "path": path,
            "sha256_matches": hashlib.sha256(raw).hexdigest() == body["sha256"],
            "body_bytes": len(raw),
            "tools": [tool_name(path, t) for t in tools],
            "tools_bytes": len(compact(tools)) if "tools" in v else 0,
            "system_bytes": system_bytes(path, v),
            "calls": calls(path, v),
        })
    json.dump(out, sys.stdout)


main()

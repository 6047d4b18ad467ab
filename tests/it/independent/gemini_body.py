#!/usr/bin/env python3
"""An independent reader of Gemini API request bodies in an agentwire trace, for the Gemini
CLI tests: written apart from agentwire's Rust code, with the Python standard library.

usage: gemini_body.py TRACE

Prints one JSON array, one object per Gemini request (a POST whose path ends with
`/models/MODEL:generateContent` or `:streamGenerateContent`), in trace order: its exchange
id, the model and streaming as the URL says them, whether the compact re-serialization of
the body has the stored SHA-256 (then every byte count is a count of the bytes that crossed
the wire), the body's bytes, the bytes of `tools` and of `systemInstruction` as sent, each
function declaration's name and bytes, the number of `contents`, and whether the body asks
for structured output (`generationConfig.responseJsonSchema`: the model-router call).
"""
import hashlib
import json
import re
import sys

PATH = re.compile(r"/models/([^/:?]+):(generateContent|streamGenerateContent)(\?.*)?$")


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def main():
    out = []
    for line in open(sys.argv[1], encoding="utf-8"):
        rec = json.loads(line)
        if rec.get("type") != "exchange":
            continue
        req = rec["request"]
        m = PATH.search(req.get("target", ""))
        if req.get("method") != "POST" or not m or "json" not in req["body"]:
            continue
        value = req["body"]["json"]
        raw = compact(value)
        decls = []
        for entry in value.get("tools") or []:
            for d in entry.get("functionDeclarations") or []:
                decls.append({"name": d.get("name"), "bytes": len(compact(d))})
        config = value.get("generationConfig") or {}
        out.append({
            "id": rec["id"],
            "model": m.group(1),
            "streaming": m.group(2) == "streamGenerateContent" and "alt=sse" in (m.group(3) or ""),
            "sha256_matches": hashlib.sha256(raw).hexdigest() == req["body"]["sha256"],
            "body_bytes": len(raw),
            "tools_bytes": len(compact(value["tools"])) if "tools" in value else 0,
            "system_bytes": len(compact(value["systemInstruction"])) if "systemInstruction" in value else 0,
            "tools": decls,
            "contents": len(value.get("contents") or []),
            "router": "responseJsonSchema" in config,
        })
    json.dump(out, sys.stdout)


main()

#!/usr/bin/env python3
"""An independent reader of OpenAI Responses request bodies in an agentwire trace, for the
Codex tests: written apart from agentwire's Rust code, with the Python standard library.

usage: responses_tools.py TRACE EXCHANGE_ID

Prints one JSON object: for the request body of exchange EXCHANGE_ID, whether its compact
re-serialization has the stored SHA-256 (then every byte count below is a count of the
bytes that crossed the wire), and per tool (namespaces flattened: "namespace.name") its
bytes and the sections its description declares ("### `name`" headings, each up to the
next heading line), and the bytes of the developer messages that open `input`.
"""
import hashlib
import json
import sys


def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def nested(description):
    out, name, start, at = [], None, 0, 0
    for line in description.splitlines(keepends=True):
        here = at
        at += len(line.encode("utf-8"))
        text = line.rstrip()
        if not text.startswith("#"):
            continue
        if name is not None:
            out.append((name, here - start))
        name = None
        if text.startswith("### `") and text.endswith("`") and len(text) > 6:
            candidate = text[5:-1]
            if all(c.isalnum() or c in "_-." for c in candidate):
                name, start = candidate, here
    if name is not None:
        out.append((name, at - start))
    return out


def tools_of(entries, namespace=None):
    for t in entries:
        if t.get("type") == "namespace" and isinstance(t.get("tools"), list):
            yield from tools_of(t["tools"], t.get("name"))
            continue
        name = t.get("name") or t.get("type") or ""
        qualified = f"{namespace}.{name}" if namespace else name
        yield qualified, t


def main():
    path, wanted = sys.argv[1], int(sys.argv[2])
    for line in open(path, encoding="utf-8"):
        rec = json.loads(line)
        if rec.get("type") != "exchange" or rec.get("id") != wanted:
            continue
        body = rec["request"]["body"]
        value = body["json"]
        raw = compact(value)
        tools = []
        entries = list(value.get("tools") or [])
        dev_bytes = 0
        opening = True
        for item in value.get("input") or []:
            if item.get("type") == "additional_tools":
                entries.extend(item.get("tools") or [])
                continue
            role = item.get("role")
            if opening and role in ("developer", "system"):
                dev_bytes += len(compact(item))
                continue
            opening = False
        for qualified, t in tools_of(entries):
            tools.append({
                "name": qualified,
                "bytes": len(compact(t)),
                "compact": compact(t).decode("utf-8"),
                "nested": [{"name": n, "bytes": b} for n, b in nested(t.get("description") or "")],
            })
        json.dump({
            "sha256_matches": hashlib.sha256(raw).hexdigest() == body["sha256"],
            "body_bytes": len(raw),
            "developer_bytes": dev_bytes,
            "tools": tools,
        }, sys.stdout)
        return
    sys.exit(f"no exchange {wanted} in {path}")


main()

#!/usr/bin/env python3
"""Independent reader for the cross-agent matrix test: the tool calls a scripted background
build made, read from an agentwire trace's last model request with nothing but the standard
library, in any of the four dialects (Anthropic Messages `tool_use`/`tool_result`, OpenAI
Responses `function_call`/`function_call_output`, Gemini `functionCall`/`functionResponse`,
Chat Completions `tool_calls`/`tool` messages). Prints one JSON object:
{"calls": [[name, args, result], ...], "polls": N, "redundant": N}, where the first call
starts the job, every later call polls it, and a poll is redundant when it repeats the
previous poll of the same tool and arguments and its result is the same text once digits
are blanked (a wall time, an elapsed time or a byte count tells the model nothing new) and
Codex's `Chunk ID: …` line dropped (a fresh hex id on every output of its shell tools)."""
import base64
import json
import re
import sys


def body_of(rec):
    b = rec["request"]["body"]
    if "json" in b:
        return b["json"]
    if "text" in b:
        return json.loads(b["text"])
    return json.loads(base64.b64decode(b["base64"]))


def path_of(req):
    # the recorded URL (an absolute one on the proxy route), without its query
    target = req.get("target", "")
    if "://" in target:
        target = "/" + target.split("://", 1)[1].split("/", 1)[1]
    return target.split("?")[0]


def text_of(v):
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "\n".join(text_of(x) for x in v)
    if isinstance(v, dict):
        for k in ("text", "output", "content"):
            if k in v:
                return text_of(v[k])
    return json.dumps(v, sort_keys=True)


def calls_messages(body):
    calls, results = [], {}
    for m in body.get("messages", []):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if b.get("type") == "tool_use":
                calls.append((b["id"], b["name"], b["input"]))
            elif b.get("type") == "tool_result":
                results[b["tool_use_id"]] = text_of(b.get("content", ""))
    return [(n, a, results.get(i)) for i, n, a in calls]


def calls_responses(body):
    calls, results = [], {}
    for it in body.get("input", []):
        if it.get("type") == "function_call":
            calls.append((it["call_id"], it["name"], json.loads(it["arguments"])))
        elif it.get("type") == "function_call_output":
            results[it["call_id"]] = text_of(it["output"])
    return [(n, a, results.get(i)) for i, n, a in calls]


def calls_gemini(body):
    calls, results = [], []
    for c in body.get("contents", []):
        for p in c.get("parts", []):
            if "functionCall" in p:
                calls.append((p["functionCall"]["name"], p["functionCall"].get("args", {})))
            elif "functionResponse" in p:
                results.append(text_of(p["functionResponse"].get("response", {})))
    return [(n, a, results[k] if k < len(results) else None) for k, (n, a) in enumerate(calls)]


def main():
    last = None
    for line in open(sys.argv[1], encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        rec = json.loads(line)
        if rec.get("type") != "exchange" or rec["request"].get("method") != "POST":
            continue
        path = path_of(rec["request"])
        body = body_of(rec)
        tools = body.get("tools") or []
        if not tools:
            continue  # side calls (titles, Gemini's router) offer no tools
        last = (path, body)
    path, body = last
    if "generateContent" in path or "streamGenerateContent" in path:
        calls = calls_gemini(body)
    elif path.endswith("/responses"):
        calls = calls_responses(body)
    else:
        calls = calls_messages(body)
    def blank(s):
        s = re.sub(r"(?m)^Chunk ID: \S+\n?", "", s or "")
        return re.sub(r"\d+", "#", s)

    polls, redundant, previous = 0, 0, {}
    for name, args, result in calls[1:]:
        polls += 1
        key = (name, json.dumps(args, sort_keys=True))
        if key in previous and previous[key] == blank(result):
            redundant += 1
        previous[key] = blank(result)
    print(json.dumps({"calls": calls, "polls": polls, "redundant": redundant}))


main()

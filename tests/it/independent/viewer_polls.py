#!/usr/bin/env python3
"""Independent reader for the viewer test: which exchanges of an agentwire trace made the
poll calls `agentwire analyze --format json` counts. Reads the trace's JSON Lines and the
analysis with nothing but the standard library; prints one JSON object:
{"exchanges": N, "poll_turns": [ids...], "redundant_turns": [ids...]}, where a poll's turn
is the exchange whose response body carries the `tool_use` id of the poll call."""
import json
import sys

trace, analysis = sys.argv[1], sys.argv[2]
responses = {}
for line in open(trace, encoding="utf-8"):
    line = line.strip()
    if not line:
        continue
    rec = json.loads(line)
    if rec.get("type") != "exchange":
        continue
    body = (rec.get("response") or {}).get("body") or {}
    text = body.get("text")
    if text is None and "json" in body:
        text = json.dumps(body["json"])
    responses[rec["id"]] = text or ""

a = json.load(open(analysis, encoding="utf-8"))
def turn_of(call):
    quoted = '"' + call + '"'
    found = [i for i, t in responses.items() if quoted in t]
    assert len(found) == 1, (call, found)
    return found[0]

polls, redundant = set(), set()
for e in a["episodes"]:
    for c in e["calls"]:
        polls.add(turn_of(c))
    for r in e["redundant_calls"]:
        redundant.add(turn_of(r["call"]))
print(json.dumps({"exchanges": len(responses), "poll_turns": sorted(polls), "redundant_turns": sorted(redundant)}))

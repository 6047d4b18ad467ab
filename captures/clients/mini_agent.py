#!/usr/bin/env python3
"""mini_agent: a small Messages API agent loop written for agentwire's samples and tests.

Standard library only. It talks to $ANTHROPIC_BASE_URL with $ANTHROPIC_API_KEY, streams
every reply (its own SSE parser, independent of agentwire's), runs the tools the model
calls, and behaves like a real agent CLI where it matters to agentwire:
  * tool `run_command` runs a shell command; with run_in_background it starts a job whose
    output goes to a file and returns that file's path;
  * tool `read_file` reads a file;
  * when a reply ends its turn while a job still runs, it waits for the job and sends a
    <task-notification> with the job's status and exit code;
  * before the session it asks for a title in a side call without tools.
Usage: mini_agent.py PROMPT
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

BASE = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
KEY = os.environ.get("ANTHROPIC_API_KEY", "")
MODEL = os.environ.get("MINI_AGENT_MODEL", "claude-sonnet-4-5-20250929")
SYSTEM = [
    {"type": "text", "text": "You are mini-agent, a small test client written for agentwire."},
    {"type": "text", "text": "Use run_command for shell work and read_file to look at files.",
     "cache_control": {"type": "ephemeral"}},
]
TOOLS = [
    {"name": "run_command", "description": "Run a shell command. Set run_in_background for long jobs.",
     "input_schema": {"type": "object", "properties": {
         "command": {"type": "string", "description": "The command line"},
         "run_in_background": {"type": "boolean", "default": False}},
         "required": ["command"]}},
    {"name": "read_file", "description": "Read a text file.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                      "required": ["path"]}},
]
TASKS = tempfile.mkdtemp(prefix="mini-agent-tasks-")
JOBS = {}


def post(payload):
    req = urllib.request.Request(
        BASE + "/v1/messages", data=json.dumps(payload).encode(), method="POST",
        headers={"content-type": "application/json", "x-api-key": KEY,
                 "anthropic-version": "2023-06-01", "user-agent": "mini-agent/1.0"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return assemble(resp)


def events(resp):
    """Yield (event, data) pairs from an SSE byte stream."""
    event, data = None, []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


def assemble(resp):
    message, blocks, partial = {}, [], {}
    for _, data in events(resp):
        ev = json.loads(data)
        kind = ev["type"]
        if kind == "message_start":
            message = ev["message"]
        elif kind == "content_block_start":
            blocks.append(ev["content_block"])
        elif kind == "content_block_delta":
            d, b = ev["delta"], blocks[ev["index"]]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "input_json_delta":
                partial[ev["index"]] = partial.get(ev["index"], "") + d["partial_json"]
        elif kind == "content_block_stop" and ev["index"] in partial:
            blocks[ev["index"]]["input"] = json.loads(partial.pop(ev["index"]))
        elif kind == "message_delta":
            message.update(ev["delta"])
        elif kind == "error":
            raise RuntimeError(ev["error"])
    message["content"] = blocks
    return message


def run_tool(name, args):
    if name == "read_file":
        try:
            with open(args["path"]) as f:
                return f.read() or "(empty file)", False
        except OSError as e:
            return str(e), True
    if args.get("run_in_background"):
        job = "job-%d" % (len(JOBS) + 1)
        out = os.path.join(TASKS, job + ".output")
        proc = subprocess.Popen(args["command"], shell=True, stdout=open(out, "w"),
                                stderr=subprocess.STDOUT)
        JOBS[job] = (proc, out)
        return ("Command running in background with ID: %s. Output is being written to: %s"
                % (job, out)), False
    p = subprocess.run(args["command"], shell=True, capture_output=True, text=True, timeout=60)
    return (p.stdout + p.stderr).strip() or "(no output)", p.returncode != 0


def main():
    prompt = " ".join(sys.argv[1:]) or "hello"
    title = post({"model": MODEL, "max_tokens": 50, "stream": True,
                  "messages": [{"role": "user", "content": "Write a 3-word title for: " + prompt}]})
    print("title:", "".join(b.get("text", "") for b in title["content"]))
    messages = [{"role": "user", "content": prompt}]
    for _ in range(50):
        reply = post({"model": MODEL, "max_tokens": 4096, "stream": True, "system": SYSTEM,
                      "tools": TOOLS, "messages": messages})
        messages.append({"role": "assistant", "content": reply["content"]})
        calls = [b for b in reply["content"] if b["type"] == "tool_use"]
        for b in reply["content"]:
            if b["type"] == "text":
                print("assistant:", b["text"])
        if calls:
            results = []
            for c in calls:
                text, err = run_tool(c["name"], c["input"])
                results.append({"type": "tool_result", "tool_use_id": c["id"],
                                "content": text, "is_error": err})
            messages.append({"role": "user", "content": results})
            continue
        running = [(j, p, o) for j, (p, o) in JOBS.items() if p.returncode is None]
        if not running:
            return 0
        job, proc, out = running[0]
        code = proc.wait()
        status = "completed" if code == 0 else "failed"
        messages.append({"role": "user", "content": [{"type": "text", "text":
            "<task-notification><task-id>%s</task-id><status>%s</status><exit-code>%d</exit-code>"
            "<output-file>%s</output-file></task-notification>" % (job, status, code, out)}]})
    return 1


if __name__ == "__main__":
    sys.exit(main())

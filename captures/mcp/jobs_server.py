#!/usr/bin/env python3
"""jobs: agentwire's test MCP server (Python standard library only).

Serves the same tools over stdio (newline-delimited JSON-RPC, the default) or Streamable
HTTP (`--http 127.0.0.1:PORT`, endpoint `/mcp`), in both protocol generations:

- 2025-11-25: `initialize` handshake, `Mcp-Session-Id` on HTTP, tasks in the core
  protocol (a `tools/call` carrying `params.task` becomes a task; `tasks/get`,
  `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status` on stdio).
- 2026-07-28: stateless (`server/discover`, protocol version in each request's `_meta`
  and the `MCP-Protocol-Version` header), tasks as the `io.modelcontextprotocol/tasks`
  extension (a `tools/call` from a client that declares the extension gets
  `resultType: "task"`; `tasks/get` carries the result inline; `tasks/cancel`).

Tools:
- `slow_build` (target, seconds): runs as a task whenever the client allows it, else
  blocks for `seconds` and answers. Its job id is the task id.
- `plain_slow` (seconds): a plain slow tool, never a task.
- `get_status` (job_id): state of a job, for a model that polls by itself.
- `crash`: writes half a message and exits with status 3 (for crash tests).

Options: `--seconds N` default build time (6), `--poll-interval-ms N` (1000),
`--tasks negotiated|always` (negotiated), `--generation both|2025-11-25|2026-07-28` (both), `--wire-log DIR` writes the raw bytes read (`in.bin`) and written (`out.bin`) on stdio.
"""

import argparse
import datetime
import itertools
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
PV_META = "io.modelcontextprotocol/protocolVersion"
CAPS_META = "io.modelcontextprotocol/clientCapabilities"
RELATED = "io.modelcontextprotocol/related-task"

ARGS = None
LOCK = threading.Lock()
TASKS = {}
NEXT = itertools.count(1)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def tools(modern):
    build = {
        "name": "slow_build",
        "description": "Build a target. Slow: runs as an MCP task when the client supports tasks; its job id can be polled with get_status.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "target": {"type": "string"},
                "seconds": {"type": "integer", "description": "how long the build takes"},
            },
            "required": ["target"],
        },
    }
    if not modern:
        build["execution"] = {"taskSupport": "optional"}
    return [
        build,
        {
            "name": "plain_slow",
            "description": "Wait some seconds, then answer. Never a task.",
            "inputSchema": {"type": "object", "properties": {"seconds": {"type": "integer"}}},
        },
        {
            "name": "get_status",
            "description": "Status of a build job started by slow_build.",
            "inputSchema": {
                "type": "object",
                "properties": {"job_id": {"type": "string"}},
                "required": ["job_id"],
            },
        },
        {
            "name": "crash",
            "description": "Crash the server mid-message (tests only).",
            "inputSchema": {"type": "object", "properties": {}},
        },
    ]


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def build_result(job, target):
    return text_result(f"build of {target} finished: ok (job {job})")


class Task:
    def __init__(self, target, seconds, modern):
        self.id = f"job-{next(NEXT)}"
        self.target = target
        self.created = now_iso()
        self.start = time.monotonic()
        self.seconds = seconds
        self.modern = modern
        self.cancelled = False

    def status(self):
        if self.cancelled:
            return "cancelled"
        return "completed" if time.monotonic() - self.start >= self.seconds else "working"

    def shape(self, detailed):
        st = self.status()
        t = {
            "taskId": self.id,
            "status": st,
            "statusMessage": f"building {self.target}" if st == "working" else st,
            "createdAt": self.created,
            "lastUpdatedAt": now_iso(),
        }
        if self.modern:
            t["ttlMs"] = 600000
            t["pollIntervalMs"] = ARGS.poll_interval_ms
            if detailed and st == "completed":
                t["result"] = build_result(self.id, self.target)
        else:
            t["ttl"] = 600000
            t["pollInterval"] = ARGS.poll_interval_ms
        return t


def client_has_tasks_ext(params):
    caps = (params.get("_meta") or {}).get(CAPS_META) or {}
    return TASKS_EXT in (caps.get("extensions") or {})


def call_tool(params, modern, notify):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "slow_build":
        target = str(args.get("target", "all"))
        seconds = float(args.get("seconds", ARGS.seconds))
        as_task = client_has_tasks_ext(params) if modern else "task" in params
        as_task = as_task or ARGS.tasks == "always"
        task = Task(target, seconds, modern)
        with LOCK:
            TASKS[task.id] = task
        if as_task:
            if notify is not None:
                threading.Timer(seconds, lambda: notify(task)).start()
            if modern:
                return dict(task.shape(False), resultType="task")
            return {"task": task.shape(False)}
        time.sleep(seconds)
        return build_result(task.id, target)
    if name == "plain_slow":
        seconds = float(args.get("seconds", ARGS.seconds))
        time.sleep(seconds)
        return text_result(f"waited {seconds:g} s")
    if name == "get_status":
        with LOCK:
            task = TASKS.get(str(args.get("job_id")))
        if task is None:
            return text_result(f"no job {args.get('job_id')!r}", True)
        st = task.status()
        if st == "completed":
            return text_result(f"job {task.id}: completed; build of {task.target} finished: ok")
        return text_result(f"job {task.id}: {st}")
    raise KeyError(name)


def handle(msg, state, notify):
    """Answer one JSON-RPC message; returns the response object or None."""
    method = msg.get("method")
    params = msg.get("params") or {}
    if "id" not in msg or method is None:
        return None  # notification or a response to us
    rid = msg["id"]
    pv = (params.get("_meta") or {}).get(PV_META) or state.get("pv")
    modern = pv == MODERN

    def ok(result):
        if modern:
            result.setdefault("resultType", "complete")
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def err(code, message, data=None):
        e = {"code": code, "message": message}
        if data is not None:
            e["data"] = data
        return {"jsonrpc": "2.0", "id": rid, "error": e}

    info = {"name": "jobs", "version": "1.0.0"}
    if method == "initialize" and ARGS.generation == MODERN:
        return err(-32601, "this server speaks 2026-07-28 only (use server/discover)")
    if method == "initialize":
        asked = params.get("protocolVersion")
        pv = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        state["pv"] = pv
        caps = {"tools": {"listChanged": False}}
        if pv == "2025-11-25":
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return ok({"protocolVersion": pv, "capabilities": caps, "serverInfo": info})
    if method == "server/discover" and ARGS.generation == "2025-11-25":
        return err(-32601, f"method not found: {method}")
    if method == "server/discover":
        return ok({
            "supportedVersions": HANDSHAKE_VERSIONS + [MODERN],
            "capabilities": {"tools": {}, "extensions": {TASKS_EXT: {}}},
            "serverInfo": info,
        })
    if method == "ping":
        return ok({})
    if method == "tools/list":
        return ok({"tools": tools(modern)})
    if method == "tools/call":
        if params.get("name") == "crash":
            state["crash"] = True
            return None
        try:
            return ok(call_tool(params, modern, None if modern else notify))
        except KeyError:
            return err(-32602, f"unknown tool {params.get('name')!r}")
    if method in ("tasks/get", "tasks/result", "tasks/cancel"):
        with LOCK:
            task = TASKS.get(params.get("taskId"))
        if task is None:
            return err(-32602, f"unknown task {params.get('taskId')!r}")
        if method == "tasks/cancel":
            task.cancelled = True
            return ok(task.shape(True))
        if method == "tasks/get":
            return ok(task.shape(True))
        while task.status() == "working":
            time.sleep(0.05)
        res = build_result(task.id, task.target)
        res["_meta"] = {RELATED: {"taskId": task.id}}
        return ok(res)
    if method == "tasks/list" and not modern:
        with LOCK:
            return ok({"tasks": [t.shape(False) for t in TASKS.values()]})
    return err(-32601, f"method not found: {method}")


class Wire:
    def __init__(self):
        self.lock = threading.Lock()
        d = ARGS.wire_log
        self.log_in = open(os.path.join(d, "in.bin"), "ab") if d else None
        self.log_out = open(os.path.join(d, "out.bin"), "ab") if d else None

    def write(self, data):
        with self.lock:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            if self.log_out:
                self.log_out.write(data)
                self.log_out.flush()

    def send(self, obj):
        self.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")


def serve_stdio():
    wire = Wire()
    state = {}

    def notify(task):
        while task.status() == "working":  # a timer may fire a little early
            time.sleep(0.01)
        if task.status() != "cancelled":
            wire.send({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                       "params": task.shape(False)})

    def answer(msg):
        resp = handle(msg, state, notify)
        if state.get("crash"):
            wire.write(b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":{"cont')
            os._exit(3)
        if resp is not None:
            wire.send(resp)

    for line in sys.stdin.buffer:
        if wire.log_in:
            wire.log_in.write(line)
            wire.log_in.flush()
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if msg.get("method") == "tools/call" and msg.get("params", {}).get("name") != "crash":
            threading.Thread(target=answer, args=(msg,), daemon=True).start()
        else:
            answer(msg)


class HttpHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sessions = {}

    def log_message(self, *a):
        pass

    def reply(self, status, body=b"", ctype="application/json", headers=()):
        self.send_response(status)
        if body or status != 202:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(405, b"", "text/plain", [("Allow", "POST, DELETE")])

    def do_DELETE(self):
        HttpHandler.sessions.pop(self.headers.get("Mcp-Session-Id"), None)
        self.reply(200, b"")

    def do_POST(self):
        if self.path.split("?")[0] != "/mcp":
            return self.reply(404, b'{"error":"not found"}')
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            msg = json.loads(body)
        except ValueError:
            return self.reply(400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}')
        sid = self.headers.get("Mcp-Session-Id")
        state = HttpHandler.sessions.get(sid, {}) if sid else {}
        if self.headers.get("MCP-Protocol-Version") == MODERN:
            state = {"pv": MODERN}
        if "id" not in msg:
            return self.reply(202)
        resp = handle(msg, state, None)
        if resp is None:
            return self.reply(202)
        extra = []
        if msg.get("method") == "initialize":
            sid = f"session-{next(NEXT)}"
            HttpHandler.sessions[sid] = state
            extra.append(("Mcp-Session-Id", sid))
        data = json.dumps(resp, separators=(",", ":")).encode()
        if msg.get("method") == "tools/call":
            # Per-request SSE stream: the answer as one event.
            return self.reply(200, b"event: message\ndata: " + data + b"\n\n", "text/event-stream", extra)
        self.reply(200, data, "application/json", extra)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--http", help="serve Streamable HTTP on HOST:PORT (port 0: any; the URL is printed)")
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--poll-interval-ms", type=int, default=1000)
    p.add_argument("--wire-log")
    p.add_argument("--tasks", choices=["negotiated", "always"], default="negotiated",
                   help="make slow_build a task only when the client declared task support "
                   "(the spec), or always (a server that ignores the client's capabilities)")
    p.add_argument("--generation", choices=["both", "2025-11-25", MODERN], default="both",
                   help="protocol generations served (default both)")
    ARGS = p.parse_args()
    if ARGS.http:
        host, port = ARGS.http.rsplit(":", 1)
        srv = ThreadingHTTPServer((host, int(port)), HttpHandler)
        print(f"http://{host}:{srv.server_address[1]}/mcp", flush=True)
        srv.serve_forever()
    else:
        serve_stdio()


if __name__ == "__main__":
    main()

"""Drives irisc-lsp through a session as an editor would, over its standard
input and output, and checks every reply: initialize; open session.iris, which
imports a HIP header (described in the background: no diagnostics until then,
then none); a change that introduces an error (its range and message); hover
(types, `sym`); definition (a let, a device function, a function of the
header); document symbols; completion (named arguments, enumerators);
shutdown and exit (status 0).
    lsp_session.py <irisc-lsp> <tests folder>"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

server_path, tests = sys.argv[1:]
document_path = os.path.join(tests, "lsp", "session.iris")
header_path = os.path.realpath(os.path.join(tests, "imports", "quant.hip"))
uri = "file://" + os.path.realpath(document_path)
text = open(document_path).read()
lines = text.split("\n")

server = subprocess.Popen([server_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
messages = queue.Queue()


def read_messages():
    while True:
        length = None
        while True:
            line = server.stdout.readline()
            if not line:
                return
            line = line.decode().strip()
            if not line:
                break
            if line.lower().startswith("content-length:"):
                length = int(line.split(":")[1])
        messages.put(json.loads(server.stdout.read(length)))


threading.Thread(target=read_messages, daemon=True).start()
next_id = 0
failures = []


def send(message):
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    server.stdin.flush()


def wait_for(match, what, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            message = messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            sys.exit(f"FAILED: no {what} within {timeout} s")
        if match(message):
            return message


def request(method, params):
    global next_id
    next_id += 1
    send({"id": next_id, "method": method, "params": params})
    reply = wait_for(lambda m: m.get("id") == next_id, f"reply to {method}")
    if "error" in reply:
        sys.exit(f"FAILED: {method}: {reply['error']}")
    return reply["result"]


def diagnostics(version):
    return wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"].get("version") == version, f"diagnostics of version {version}")["params"]


def check(what, got, expected):
    if got != expected:
        failures.append(what)
        print(f"FAILED: {what}\n  got:      {json.dumps(got)}\n  expected: {json.dumps(expected)}")


def at(line_text, word, nth=0, line=None):
    """The position of the nth `word` on the line holding `line_text`."""
    line = line if line is not None else next(i for i, l in enumerate(lines) if line_text in l)
    column = -1
    for _ in range(nth + 1):
        column = lines[line].index(word, column + 1)
    return {"line": line, "character": column}


def span(start, length):
    return {"start": start, "end": {"line": start["line"], "character": start["character"] + length}}


started = time.monotonic()
capabilities = request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})["capabilities"]
check("initialize: capabilities", {k: capabilities.get(k) for k in ("hoverProvider", "definitionProvider",
                                                                    "documentSymbolProvider")},
      {"hoverProvider": True, "definitionProvider": True, "documentSymbolProvider": True})
send({"method": "initialized", "params": {}})

send({"method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "iris", "version": 1, "text": text}}})
# The server answers while the header is described in the background.
symbols = request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
check("documentSymbol", [(s["name"], s["kind"], s["detail"]) for s in symbols],
      [("../imports/quant.hip", 2, "import"), ("scaled", 12, "device scaled(x: f32, s: f32) -> f32"),
       ("session", 12, "kernel session<BLOCK>(q: *i8, out: sym *f32, scale: f32, n: i32)")])
check("didOpen: no diagnostics", diagnostics(1)["diagnostics"], [])
opened = time.monotonic()

# A change that introduces an error: an undeclared name.
changed_text = text.replace("let mask = offs < n;", "let mask = offs < count;")
lines = changed_text.split("\n")
send({"method": "textDocument/didChange",
      "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": changed_text}]}})
published = diagnostics(2)["diagnostics"]
changed = time.monotonic()
check("didChange: the error", [(d["range"], d["message"], d["severity"], d["code"]) for d in published],
      [(span(at("let mask", "count"), 5), "use of undeclared name 'count'", 1, "UndeclaredName")])

hover = lambda position: request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
check("hover: a tile", hover(at("let codes", "offs"))["contents"]["value"],
      "```iris\nlet offs: tile<i32, BLOCK>\n```")
check("hover: a sym pointer", hover(at("store(out, scaled", "out"))["contents"]["value"],
      "```iris\nparameter out: sym *f32\n```\n\nA pointer into the symmetric heap (`sym`): `p @ r` reaches rank r's copy.")
check("hover: an imported function", hover(at("dequantize(codes", "dequantize"))["contents"]["value"],
      "```iris\ndevice dequantize(q: i8, scale: f32, zero: f32) -> f32\n```\n\nimported from `../imports/quant.hip`")
check("hover: a built-in", hover(at("let offs", "arange"))["contents"]["value"],
      "```iris\nbuilt-in arange(size) -> tile<i32, BLOCK>\n```")

definition = lambda position: request("textDocument/definition", {"textDocument": {"uri": uri}, "position": position})
check("definition: a let", definition(at("let codes", "offs")),
      {"uri": uri, "range": span(at("let offs", "offs"), 4)})
check("definition: a device function", definition(at("store(out, scaled", "scaled")),
      {"uri": uri, "range": span(at("device scaled", "scaled"), 6)})
header_lines = open(header_path).read().split("\n")
header_line = next(i for i, l in enumerate(header_lines) if "float dequantize(" in l)
check("definition: a function of the header", definition(at("dequantize(codes", "dequantize")),
      {"uri": "file://" + header_path,
       "range": span({"line": header_line, "character": header_lines[header_line].index("dequantize")}, 10)})

complete = lambda position: request("textDocument/completion", {"textDocument": {"uri": uri}, "position": position})
inside_load = at("let codes", "q + offs")
labels = [item["label"] for item in complete(inside_load)]
check("completion: load's named arguments first", labels[:3], ["ptr", "mask", "other"])
check("completion: the built-ins and keywords", {"atomic_add", "put_signal", "kernel", "bf16"} <= set(labels), True)

lines.insert(14, "    fence(sem = ")
with_fence = "\n".join(lines)
send({"method": "textDocument/didChange",
      "params": {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": with_fence}]}})
diagnostics(3)
check("completion: enumerators after sem =", [item["label"] for item in complete({"line": 14, "character": 16})],
      ["relaxed", "acquire", "release", "acq_rel"])

check("shutdown", request("shutdown", None), None)
send({"method": "exit"})
try:
    status = server.wait(timeout=10)
except subprocess.TimeoutExpired:
    server.kill()
    status = "none: it did not exit"
check("exit status", status, 0)
print(f"open with the header described {opened - started:.2f} s, change {changed - opened:.3f} s")
print(f"lsp session: {len(failures)} failed" if failures else "lsp session: ok")
sys.exit(1 if failures else 0)

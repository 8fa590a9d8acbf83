#!/usr/bin/env python3
"""A local artifact server for shimkeeper's tests (python3 standard library only).

It binds 127.0.0.1 on an ephemeral port, writes that port to --port-file once it listens, and
serves the files under --dir. With --tls-cert and --tls-key it speaks HTTPS instead.

Behaviour is chosen by a prefix of the URL path. "Wrapper" prefixes take the rest of the path
as a new request, so they compose (/fail/500/1/redirect/2/a.tar.gz); "body" prefixes end the
chain and name a file under --dir.

  /<path>                       the file, with Content-Length (GET and HEAD)
  /fail/<code>/<count>/<rest>   answer <code> to the first <count> requests for this exact URL,
                                then handle <rest>
  /retry-after/<secs>/<count>/<rest>
                                answer 429 with "Retry-After: <secs>" to the first <count>
                                requests for this exact URL, then handle <rest>
  /redirect/<n>/<rest>          a chain of <n> 302 redirects ending at /<rest>
  /redirect-to/<url-encoded target>
  /need-auth/<token>/<rest>     401 with a Bearer challenge unless "Authorization: Bearer <token>"
                                one 302 to the decoded target (file:///etc/passwd, http://...)
  /stall/<path>                 headers (full Content-Length) and the first half of the body,
                                then nothing more until the client goes away
  /slow/<bytes_per_sec>/<path>  the body trickled at about that rate
  /hold/<count>/<path>          the first <count> requests for this URL: headers (full
                                Content-Length), then a byte every half second (no client's stall
                                timeout fires) until /_release is requested, then the rest at
                                once; later requests served plainly
  /_release                     lets every held download go on (itself not counted)
  /silent/<count>/<path>        the first <count> requests for this URL: no answer at all, not
                                even a status line, until the client goes away; later requests
                                served as /<path>
  /truncate/<path>              full Content-Length, half the body, then the connection closes
  /truncate-once/<path>         the first request for this URL as /truncate; later ones served
                                whole, honouring "Range: bytes=N-" (206)
  /truncate-once-norange/<path> the same, but later requests ignore Range (always 200, whole)
  /nolength/<path>              the body without Content-Length, ended by closing the connection
  /chunked/<path>               the body in chunked transfer encoding (no Content-Length)
  /_requests                    JSON {"total": N, "paths": {"<url path>": count},
                                "bytes": {"<url path>": body bytes sent}}: every request except
                                /_requests itself, redirects and failures included

Plain files honour "Range: bytes=N-" with 206 and Content-Range, as most servers do.
  /_reset                       zero the counters (itself not counted)

Counters are keyed by the URL path as requested (query strings dropped). A missing file is 404.
"""

import argparse
import http.server
import json
import os
import select
import socket
import ssl
import sys
import threading
import time
import urllib.parse

CHUNK = 64 * 1024


class State:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.lock = threading.Lock()
        self.paths = {}
        self.total = 0
        self.bytes = {}
        self.released = threading.Event()

    def sent(self, path, length):
        with self.lock:
            self.bytes[path] = self.bytes.get(path, 0) + length

    def count(self, path):
        with self.lock:
            self.total += 1
            self.paths[path] = self.paths.get(path, 0) + 1
            return self.paths[path]

    def reset(self):
        with self.lock:
            self.total = 0
            self.paths = {}
            self.bytes = {}

    def snapshot(self):
        with self.lock:
            return {"total": self.total, "paths": dict(self.paths), "bytes": dict(self.bytes)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "artifact-server/1"

    def log_message(self, fmt, *args):
        log = self.server.log_file
        if log is not None:
            log.write("%s %s\n" % (self.address_string(), fmt % args))
            log.flush()

    def do_HEAD(self):
        self.dispatch(head=True)

    def do_GET(self):
        self.dispatch(head=False)

    # ---- dispatch -------------------------------------------------------------------------

    def dispatch(self, head):
        path = urllib.parse.urlsplit(self.path).path
        state = self.server.state
        if path == "/_requests":
            return self.send_bytes(200, json.dumps(state.snapshot()).encode(), "application/json")
        if path == "/_reset":
            state.reset()
            return self.send_bytes(200, b"{}", "application/json")
        if path == "/_release":
            state.released.set()
            return self.send_bytes(200, b"{}", "application/json")
        seen = state.count(path)
        self.counted_path = path
        try:
            self.route(path, seen, head)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout):
            self.close_connection = True

    def route(self, path, seen, head):
        parts = path.lstrip("/").split("/")
        kind = parts[0]
        if kind == "fail" and len(parts) >= 4:
            code, count = int(parts[1]), int(parts[2])
            if seen <= count:
                return self.send_bytes(code, b"injected failure\n", "text/plain")
            return self.route("/" + "/".join(parts[3:]), seen, head)
        if kind == "need-auth" and len(parts) >= 3:
            if self.headers.get("Authorization") != "Bearer " + parts[1]:
                challenge = 'Bearer realm="https://auth.invalid/token",service="test"'
                return self.send_bytes(401, b"unauthorized\n", "text/plain",
                                       {"WWW-Authenticate": challenge})
            return self.route("/" + "/".join(parts[2:]), seen, head)
        if kind == "retry-after" and len(parts) >= 4:
            seconds, count = parts[1], int(parts[2])
            if seen <= count:
                return self.send_bytes(429, b"slow down\n", "text/plain", {"Retry-After": seconds})
            return self.route("/" + "/".join(parts[3:]), seen, head)
        if kind == "redirect" and len(parts) >= 3:
            left = int(parts[1])
            rest = "/".join(parts[2:])
            target = "/" + rest if left <= 1 else "/redirect/%d/%s" % (left - 1, rest)
            if left <= 0:
                return self.route(target, seen, head)
            return self.redirect(self.absolute(target))
        if kind == "redirect-to" and len(parts) >= 2:
            return self.redirect(urllib.parse.unquote("/".join(parts[1:])))
        if kind == "stall" and len(parts) >= 2:
            return self.serve_file("/".join(parts[1:]), head, mode="stall")
        if kind == "hold" and len(parts) >= 3:
            mode = "hold" if seen <= int(parts[1]) else "plain"
            return self.serve_file("/".join(parts[2:]), head, mode=mode)
        if kind == "silent" and len(parts) >= 3:
            if seen <= int(parts[1]):
                return self.wait_for_the_client_to_leave()
            return self.route("/" + "/".join(parts[2:]), seen, head)
        if kind == "slow" and len(parts) >= 3:
            return self.serve_file("/".join(parts[2:]), head, mode="slow", rate=int(parts[1]))
        if kind in ("truncate-once", "truncate-once-norange") and len(parts) >= 2:
            mode = "truncate" if seen == 1 else ("plain" if kind == "truncate-once" else "norange")
            return self.serve_file("/".join(parts[1:]), head, mode=mode)
        if kind == "truncate" and len(parts) >= 2:
            return self.serve_file("/".join(parts[1:]), head, mode="truncate")
        if kind == "nolength" and len(parts) >= 2:
            return self.serve_file("/".join(parts[1:]), head, mode="nolength")
        if kind == "chunked" and len(parts) >= 2:
            return self.serve_file("/".join(parts[1:]), head, mode="chunked")
        return self.serve_file(path.lstrip("/"), head, mode="plain")

    # ---- responses ------------------------------------------------------------------------

    def absolute(self, path):
        scheme = "https" if self.server.tls else "http"
        host = self.headers.get("Host") or "127.0.0.1:%d" % self.server.server_address[1]
        return "%s://%s%s" % (scheme, host, path)

    def wait_for_the_client_to_leave(self):
        self.close_connection = True
        self.connection.settimeout(0.5)
        while True:
            try:
                if not self.connection.recv(1):
                    return
            except socket.timeout:
                continue

    def redirect(self, location):
        self.send_bytes(302, b"", "text/plain", {"Location": location})

    def send_bytes(self, code, body, content_type, extra=None):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def resolve(self, relative):
        root = self.server.state.root
        full = os.path.realpath(os.path.join(root, urllib.parse.unquote(relative)))
        if full != root and not full.startswith(root + os.sep):
            return None
        return full if os.path.isfile(full) else None

    def serve_file(self, relative, head, mode, rate=0):
        full = self.resolve(relative)
        if full is None:
            return self.send_bytes(404, b"not found\n", "text/plain")
        size = os.path.getsize(full)
        start = self.range_start(size) if mode == "plain" else 0
        if start is None:
            return self.send_bytes(416, b"", "text/plain", {"Content-Range": "bytes */%d" % size})
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes" if mode == "plain" else "none")
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
            self.send_header("Content-Length", str(size - start))
        elif mode == "nolength":
            self.send_header("Connection", "close")
            self.close_connection = True
        elif mode == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        if head:
            return
        with open(full, "rb") as f:
            f.seek(start)
            if mode in ("stall", "truncate"):
                self.server.state.sent(self.counted_path, size // 2)
                self.wfile.write(f.read(size // 2))
                self.wfile.flush()
                self.close_connection = True
                if mode == "stall":
                    self.wait_for_client_to_leave()
                return
            if mode == "slow":
                return self.trickle(f, max(rate, 1))
            if mode == "hold":
                while not self.server.state.released.wait(0.5):
                    if f.tell() < size - 1:  # the last byte waits for the release
                        self.wfile.write(f.read(1))
                        self.wfile.flush()
                self.wfile.write(f.read())
                return
            while True:
                block = f.read(CHUNK)
                if not block:
                    break
                self.server.state.sent(self.counted_path, len(block))
                if mode == "chunked":
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                else:
                    self.wfile.write(block)
            if mode == "chunked":
                self.wfile.write(b"0\r\n\r\n")

    def range_start(self, size):
        """The N of "Range: bytes=N-" (0 without one); None when N is past the end."""
        spec = self.headers.get("Range", "")
        if not spec.startswith("bytes=") or not spec.endswith("-"):
            return 0
        try:
            start = int(spec[len("bytes="):-1])
        except ValueError:
            return 0
        return start if start < size else None

    def trickle(self, f, rate):
        # Ten slices a second, each holding a tenth of the rate (at least one byte).
        slice_bytes = max(rate // 10, 1)
        interval = slice_bytes / rate
        next_at = time.monotonic()
        while True:
            sent = self.send_slice(f, slice_bytes)
            if not sent:
                return
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def send_slice(self, f, count):
        """Up to count bytes from f's position to the client; how many were sent (0 at the end).
        Plain sockets take them by sendfile, kernel to kernel: a thousand trickling downloads in
        bench/rollout cost the machine the agents share less CPU than reading and writing them."""
        if self.server.tls:
            block = f.read(count)
            self.wfile.write(block)
            self.wfile.flush()
            return len(block)
        offset, done = f.tell(), 0
        while done < count:
            n = os.sendfile(self.connection.fileno(), f.fileno(), offset + done, count - done)
            if n == 0:
                break
            done += n
        f.seek(offset + done)
        return done

    def wait_for_client_to_leave(self):
        sock = self.connection
        while not self.server.stopping.is_set():
            readable, _, _ = select.select([sock], [], [], 0.2)
            if not readable:
                continue
            try:
                if not sock.recv(4096):
                    return
            except (OSError, ssl.SSLError):
                return


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that hangs up mid-response is what several tests do on purpose.
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, socket.timeout)):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="folder whose files are served")
    parser.add_argument("--port-file", required=True, help="written with the port once listening")
    parser.add_argument("--tls-cert", help="PEM certificate: serve HTTPS")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--log", help="append one line per request to this file")
    args = parser.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")

    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args.dir)
    server.stopping = threading.Event()
    server.tls = bool(args.tls_cert)
    server.log_file = open(args.log, "a", buffering=1) if args.log else None
    if server.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)

    # Write the port atomically so that a poller never reads half a number.
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.exit(main())

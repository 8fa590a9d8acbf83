#!/usr/bin/env python3
"""A tiny token issuer for the distribution registry's token auth, for tests only.

GET /token?service=S&scope=repository:NAME:pull answers {"token": JWT, "expires_in": N} when
the request carries HTTP basic credentials equal to --user, and 401 otherwise. The JWT is
RS256, signed with openssl (no Python crypto library needed) by --key; its header carries the
certificate (--cert) as x5c, which the registry verifies against its rootcertbundle. Every
request is appended to --log, one line each, so tests can count token requests.
"""
import argparse
import base64
import http.server
import json
import os
import subprocess
import time
import urllib.parse


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def der_of(cert_path):
    pem = open(cert_path).read()
    body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
    return base64.b64decode("".join(body.split()))


def make_token(args, service, scope):
    header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der_of(args.cert)).decode()]}
    now = int(time.time())
    access = []
    if scope:
        kind, name, actions = scope.split(":", 2)
        access.append({"type": kind, "name": name, "actions": actions.split(",")})
    claims = {"iss": "test-issuer", "sub": args.user.split(":")[0], "aud": service,
              "exp": now + 300, "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(),
              "access": access}
    signing_input = (b64url(json.dumps(header).encode()) + "." +
                     b64url(json.dumps(claims).encode())).encode()
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", args.key],
                               input=signing_input, capture_output=True, check=True).stdout
    return signing_input.decode() + "." + b64url(signature)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--user", required=True, help="user:password")
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    expected = "Basic " + base64.b64encode(args.user.encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query)
            authorized = self.headers.get("Authorization") == expected
            with open(args.log, "a") as log:
                log.write(f"{self.path} authorized={authorized}\n")
            if url.path != "/token" or not authorized:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            token = make_token(args, query.get("service", [""])[0], query.get("scope", [""])[0])
            body = json.dumps({"token": token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as out:
        out.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()

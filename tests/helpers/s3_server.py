"""Real HTTP servers for the S3 tests: moto's standalone S3 server and a fault-injecting proxy.

Nothing here patches boto3: the code under test reaches these servers over TCP on 127.0.0.1,
through the same boto3 code path as production, with `AWS_ENDPOINT_URL` pointing at them.

- `MotoServer`: moto's `ThreadedMotoServer` on a free port. `enable_auth()` turns on moto's
  IAM authentication in server mode (its `/moto-api/reset-auth` endpoint, the HTTP form of the
  `INITIAL_NO_AUTH_ACTION_COUNT` setting): from then on an unknown access key id is refused with
  `InvalidAccessKeyId` and a wrong secret with `SignatureDoesNotMatch`, exactly as AWS does.
- `FaultProxy`: a reverse proxy in front of moto that can answer 500 to the next N requests
  (an endpoint that recovers) or to every request matching a method and path pattern (an
  endpoint that fails for good mid-upload), and logs every request it saw.
- `free_port()`: a port where nothing listens, for "endpoint down".
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import unquote

import boto3
from botocore.config import Config
from moto.server import ThreadedMotoServer

HOST: Final = "127.0.0.1"
FAKE_KEY: Final = "testing"
REGION: Final = "us-east-1"
# Headers that belong to one hop, not to the request or answer being relayed.
HOP_HEADERS: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "proxy-connection",
    }
)
INJECTED_ERROR: Final = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message>"
    b"<RequestId>fault-proxy</RequestId></Error>"
)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just released by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """moto's S3 (and IAM) server on 127.0.0.1, in a thread of the test process."""

    def __init__(self) -> None:
        self._server = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
        self._clients: dict[str, Any] = {}

    def start(self) -> MotoServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def endpoint(self) -> str:
        host, port = self._server.get_host_and_port()
        return f"http://{host}:{port}"

    def client(self, service: str = "s3") -> Any:
        """A client straight to moto with the fake keys, for seeding and checking (never proxied);
        one per service, made once (a client costs a session's parse of the service's models)."""
        if service not in self._clients:
            self._clients[service] = self._new_client(service)
        return self._clients[service]

    def _new_client(self, service: str) -> Any:
        return boto3.session.Session().client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.endpoint,
            aws_access_key_id=FAKE_KEY,
            aws_secret_access_key=FAKE_KEY,
            region_name=REGION,
            config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
        )

    def _set_auth_threshold(self, count: str) -> None:
        # text/plain: as a form (urllib's default type) the body would be parsed away by Flask.
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            json.load(answer)

    def enable_auth(self) -> None:
        """From the next request on, moto checks every signature against its IAM access keys."""
        self._set_auth_threshold("0")

    def disable_auth(self) -> None:
        self._set_auth_threshold("inf")

    def create_access_key(self, user: str) -> tuple[str, str]:
        """An IAM user allowed everything on S3, and its (access key id, secret); auth must be off."""
        iam = self.client("iam")
        iam.create_user(UserName=user)
        policy = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
        }
        iam.put_user_policy(UserName=user, PolicyName="s3-all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        return str(key["AccessKeyId"]), str(key["SecretAccessKey"])


@dataclass(frozen=True)
class Seen:
    """One request the proxy relayed or refused: what it was and what it answered."""

    method: str
    path: str
    status: int


@dataclass
class _Rule:
    method: str | None
    pattern: re.Pattern[str]
    status: int
    remaining: float  # requests still to fail; inf for "for good"

    def take(self, method: str, path: str) -> bool:
        if self.remaining <= 0 or (self.method and self.method != method) or not self.pattern.search(path):
            return False
        self.remaining -= 1
        return True


# A rule "status" that answers nothing: the connection is cut mid-request.
DROP: Final = 0


class FaultProxy:
    """A reverse proxy to `upstream` that answers injected 5xx errors when told to."""

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream.removeprefix("http://")
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()
        self.seen: list[Seen] = []
        self._server = ThreadingHTTPServer((HOST, 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def fail_next(self, count: int, *, method: str | None = None, status: int = 500) -> None:
        """Answer `status` to the next `count` requests (of `method`, if given), then recover."""
        with self._lock:
            self._rules.append(_Rule(method, re.compile(""), status, count))

    def fail_matching(self, method: str, pattern: str, *, status: int = 500) -> None:
        """Answer `status` to every `method` request whose path matches `pattern`, for good."""
        with self._lock:
            self._rules.append(_Rule(method, re.compile(pattern), status, float("inf")))

    def drop_matching(self, method: str, pattern: str) -> None:
        """Cut the connection half-way through every `method` request whose path matches, for good."""
        with self._lock:
            self._rules.append(_Rule(method, re.compile(pattern), DROP, float("inf")))

    def heal(self) -> None:
        with self._lock:
            self._rules.clear()

    def paths(self, method: str) -> list[str]:
        """Decoded paths of the `method` requests seen, in order (for asserting upload order)."""
        return [unquote(seen.path) for seen in self.seen if seen.method == method]

    def _injected_status(self, method: str, path: str) -> int | None:
        with self._lock:
            for rule in self._rules:
                if rule.take(method, unquote(path)):
                    return rule.status
        return None

    def _record(self, method: str, path: str, status: int) -> None:
        with self._lock:
            self.seen.append(Seen(method, path, status))

    def _relay(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> _Answer:
        upstream = http.client.HTTPConnection(self._upstream, timeout=30)
        try:
            # The Host header is relayed as signed by the client, so signatures still verify.
            upstream.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in HOP_HEADERS and name.lower() != "content-length":
                    upstream.putheader(name, value)
            upstream.putheader("Content-Length", str(len(body)))
            upstream.endheaders(body)
            response = upstream.getresponse()
            return _Answer(response.status, response.getheaders(), response.read())
        finally:
            upstream.close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive and "Expect: 100-continue", as S3 speaks

            def _serve(self) -> None:
                status = proxy._injected_status(self.command, self.path)
                if status == DROP:
                    self._drop_mid_body()
                    return
                body = self._read_body()
                if status is not None:
                    answer = _Answer(status, [("Content-Type", "application/xml")], INJECTED_ERROR)
                else:
                    answer = proxy._relay(self.command, self.path, list(self.headers.items()), body)
                proxy._record(self.command, self.path, answer.status)
                self._answer(answer)

            def _drop_mid_body(self) -> None:
                """Take half the request body, then cut the connection: no answer at all."""
                self.rfile.read(int(self.headers.get("Content-Length") or 0) // 2)
                proxy._record(self.command, self.path, DROP)
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

            def _read_body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    return self._read_chunked()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _read_chunked(self) -> bytes:
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                return b"".join(chunks)

            def _answer(self, answer: _Answer) -> None:
                self.send_response(answer.status)
                for name, value in answer.headers:
                    lowered = name.lower()
                    # A HEAD answer keeps the object's length; others get the relayed body's.
                    if lowered in HOP_HEADERS or lowered in {"content-length", "date", "server"}:
                        continue
                    self.send_header(name, value)
                length = dict((k.lower(), v) for k, v in answer.headers).get("content-length")
                head = self.command == "HEAD"
                self.send_header("Content-Length", length if head and length else str(len(answer.body)))
                self.end_headers()
                if not head:
                    self.wfile.write(answer.body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the log is `proxy.seen`; stderr noise would hide test output

        return Handler


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

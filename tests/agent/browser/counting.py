"""Sites the redirect tests serve on 127.0.0.1 that count every connection they accept.

Why count connections (not requests): "refused" must mean nothing reached the site, not
only that the model was told so; a TLS site counts before its handshake.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.agent.browser.pages import PageHandler, running


class Site(PageHandler):
    """``/redirect?to=URL`` (302), ``/meta?to=URL``, ``/js?to=URL``, ``/parts?to=URL``
    (an image and a fetch), anything else a page saying which port served it."""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        to = parse_qs(url.query).get("to", [""])[0]
        quoted = to.replace('"', "%22")
        port = self.server.server_address[1]
        if url.path == "/redirect":
            self._send(b"", 302, {"Location": to})
            return
        body = {
            "/meta": f'<meta http-equiv="refresh" content="0; url={quoted}"><p>moving</p>',
            "/js": f'<p>moving</p><script>location = "{quoted}";</script>',
            "/parts": f'<img src="{quoted}"><script>fetch("{quoted}").catch(() => 0)</script>'
            "<p>parts page</p>",
        }.get(url.path, f"<h1>served by port {port}</h1>")
        self._send(f"<!doctype html><title>t</title>{body}".encode())


class Counting(ThreadingHTTPServer):
    """Counts the connections it accepts (before any TLS handshake)."""

    daemon_threads = True
    tls: ssl.SSLContext | None = None

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Site)
        self.connections = 0

    def get_request(self) -> tuple[Any, Any]:
        sock, address = self.socket.accept()
        self.connections += 1
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True)
        return sock, address

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@contextmanager
def serving(tls: ssl.SSLContext | None = None) -> Iterator[Counting]:
    server = Counting()
    server.tls = tls
    with running(server):
        yield server


def tls_context(folder: Path) -> ssl.SSLContext:
    """A self-signed certificate for 127.0.0.1 (the test's Chromium ignores cert errors)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context

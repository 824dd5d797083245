"""Loaded by any Python process started with this folder on PYTHONPATH: refuses non-loopback network use.

Used by the tests (in-process through conftest, and for the subprocesses they start) so that "offline"
is checked, not assumed. `socket` is patched at the bottom, so httpx, the openai SDK, urllib3 and
Chroma's clients are all covered.
"""

import ipaddress
import os
import socket

_ALLOWED_NAMES = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(OSError):
    pass


def _is_loopback(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in _ALLOWED_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(address):
    if isinstance(address, tuple) and address and not _is_loopback(address[0]):
        _record(f"connect {address!r}")
        raise NetworkBlocked(f"network use outside loopback blocked in tests: {address!r}")


def _record(what: str) -> None:
    log = os.environ.get("NETGUARD_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {what}\n")


def _connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect_ex(self, address)


def _getaddrinfo(host, *args, **kwargs):
    if host is not None and not _is_loopback(host):
        _record(f"getaddrinfo {host!r}")
        raise NetworkBlocked(f"DNS lookup outside loopback blocked in tests: {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def install() -> None:
    socket.socket.connect = _connect
    socket.socket.connect_ex = _connect_ex
    socket.getaddrinfo = _getaddrinfo


install()

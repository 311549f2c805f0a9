"""The disk cache of compiled code, shared by every process of a user.

Entries are files named by the SHA-256 of their key, under
``MLFUSE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/mlfuse``, else
``~/.cache/mlfuse``), one folder per kind of entry. A key names everything the
payload depends on (for compiled kernels: the kernel's text and the target's
toolchain, which for the CPU is the LLVM and llvmlite versions and the CPU's
name and features, and mlfuse's own version and source files: :func:`code_version`),
so a new compiler or another machine misses and recompiles.

Each file holds a magic line, the SHA-256 of its key and of its payload, then
the payload: a file that does not check out (torn, corrupted, another key's)
is deleted and reported as a miss, never trusted. Files are written to a
temporary name and renamed into place, so concurrent processes see whole
entries or none. The cache is bounded (``MLFUSE_CACHE_MAX_MB``, default 1024):
past the bound the least recently used entries are deleted. ``MLFUSE_CACHE=0``
turns it off.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

MAGIC = b"mlfuse-cache 1\n"
_puts = [0]
EVICT_EVERY = 16
"""Puts between two checks of the cache's size (a check lists every entry)."""


@functools.cache
def code_version() -> str:
    """What compiled entries depend on in mlfuse itself: its version and a
    fingerprint (path, size, modification time) of its source files, so that a
    changed compiler (an edited checkout, a reinstall) misses instead of loading
    what the old one made."""
    from mlfuse import __version__

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = []
    todo = [root]
    while todo:
        with os.scandir(todo.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        todo.append(e.path)
                elif e.name.endswith(".py"):
                    st = e.stat()
                    files.append(f"{e.path[len(root) :]} {st.st_size} {st.st_mtime_ns}")
    h = hashlib.sha256("\n".join(sorted(files)).encode())
    return f"mlfuse {__version__} {h.hexdigest()[:16]}"


def _env_int(name: str, default: int) -> int:
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"{name} must be a non-negative integer, got {v!r}") from None
    if n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    return n


def enabled() -> bool:
    """Whether compiled code is read from and written to disk (``MLFUSE_CACHE``)."""
    v = os.environ.get("MLFUSE_CACHE", "1")
    if v not in ("0", "1"):
        raise ValueError(f"MLFUSE_CACHE must be 0 (off) or 1 (on), got {v!r}")
    return v == "1"


def directory() -> Path:
    """Where the cache lives."""
    d = os.environ.get("MLFUSE_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlfuse"


def max_bytes() -> int:
    return _env_int("MLFUSE_CACHE_MAX_MB", 1024) << 20


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _path(kind: str, key: str) -> tuple[Path, bytes]:
    k = _digest(key.encode())
    h = k.hex()
    return directory() / kind / h[:2] / h, k


def get(kind: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None (absent, off, or not intact)."""
    if not enabled():
        return None
    path, k = _path(kind, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC)
    payload = data[head + 64 :]
    if (
        data[:head] != MAGIC
        or data[head : head + 32] != k
        or data[head + 32 : head + 64] != _digest(payload)
    ):
        try:  # torn or corrupted: never trusted, recompiled and rewritten
            path.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(path)  # recently used
    except OSError:
        pass
    return payload


def put(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` under ``key`` (atomically; errors leave the cache as it was)."""
    if not enabled():
        return
    path, k = _path(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + k + _digest(payload) + payload)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return  # a read-only or full disk: the cache is an optimization
    _puts[0] += 1
    if _puts[0] % EVICT_EVERY == 0:
        evict()


def evict(limit: int | None = None) -> int:
    """Delete the least recently used entries until the cache holds at most
    ``limit`` bytes (default: the configured bound); the bytes deleted."""
    limit = max_bytes() if limit is None else limit
    entries = []
    total = 0
    root = directory()
    if not root.is_dir():
        return 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                st = os.stat(p)
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, p))
            total += st.st_size
    freed = 0
    entries.sort()
    for _, size, p in entries:
        if total - freed <= limit:
            break
        try:
            os.unlink(p)
            freed += size
        except OSError:
            pass
    return freed


def clear() -> None:
    """Delete every entry."""
    evict(0)

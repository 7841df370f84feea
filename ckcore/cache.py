"""The content-addressed on-disk kernel cache.

Layout under the root (``CKCORE_CACHE_DIR`` or the per-user cache directory)::

    v1/entries/<fp[:2]>/<fp>/   meta.json + the artifacts (source.py, kernel.cubin, ...)
    v1/locks/<fp>.lock          one file lock per fingerprint
    v1/tmp/                     entries being written

An entry is written into ``tmp/`` (artifacts first, ``meta.json`` last) and renamed into place
under its lock, so readers never see a partial entry and any number of processes may build
into one cache. ``meta.json`` records the sha256 of every artifact; :meth:`Cache.lookup` checks
them and treats a damaged entry as missing. Compile failures are stored as negative entries.
The root is private to the user (0700); a root or entry another user owns or can write is
refused with :class:`CacheError`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
import uuid
from pathlib import Path
from typing import Iterator

import attrs
import filelock

from .errors import CacheError

__all__ = ["Cache", "Entry"]

FORMAT = 1


@attrs.frozen
class Entry:
    """One cache entry. ``meta["status"]`` is ``"ok"`` or ``"failed"`` (negative entry)."""

    fingerprint: str
    path: Path
    meta: dict = attrs.field(eq=False, hash=False)

    @property
    def ok(self) -> bool:
        return self.meta.get("status") == "ok"

    @property
    def files(self) -> dict[str, Path]:
        return {name: self.path / name for name in self.meta.get("files", {})}

    @property
    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Cache:
    """A kernel cache rooted at ``root``. Creating the object touches nothing on disk."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.base = self.root / f"v{FORMAT}"
        self._checked = False

    # safety -----------------------------------------------------------------------------------
    def _check_safe(self, path: Path) -> None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return
        if st.st_uid != os.getuid():
            raise CacheError(
                f"refusing to use cache directory {path}: it is owned by uid {st.st_uid}, not by you "
                f"(uid {os.getuid()}); set CKCORE_CACHE_DIR to a directory of your own"
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise CacheError(
                f"refusing to use cache directory {path}: it is writable by other users "
                f"(mode {stat.filemode(st.st_mode)}); run `chmod go-w {path}` or choose another CKCORE_CACHE_DIR"
            )

    def ensure(self) -> None:
        """Create the root (mode 0700) and check that it is safe. :raises CacheError:"""
        if self._checked:
            return
        try:
            try:  # another process may create it between any check and this call
                self.root.mkdir(parents=True, mode=0o700)
            except FileExistsError:
                pass
            else:
                os.chmod(self.root, 0o700)
            self._check_safe(self.root)
            for sub in (self.base, self.base / "entries", self.base / "locks", self.base / "tmp"):
                sub.mkdir(mode=0o700, exist_ok=True)
                self._check_safe(sub)
        except OSError as exc:
            if isinstance(exc, CacheError):
                raise
            raise CacheError(f"cannot create cache directory {self.root}: {exc}") from exc
        self._checked = True

    def _entry_dir(self, fingerprint: str) -> Path:
        if len(fingerprint) != 64 or not all(c in "0123456789abcdef" for c in fingerprint):
            raise CacheError(f"fingerprint {fingerprint!r} is not a sha256 hex digest")
        return self.base / "entries" / fingerprint[:2] / fingerprint

    def lock(self, fingerprint: str) -> filelock.FileLock:
        """The inter-process lock of one fingerprint."""
        self.ensure()
        return filelock.FileLock(str(self.base / "locks" / f"{fingerprint}.lock"))

    # reading ----------------------------------------------------------------------------------
    def _read(self, path: Path, fingerprint: str) -> Entry | None:
        try:
            meta = json.loads((path / "meta.json").read_text())
        except (OSError, ValueError):
            return None
        if meta.get("format") != FORMAT or meta.get("fingerprint") != fingerprint:
            return None
        for name, digest in meta.get("files", {}).items():
            try:
                if _sha256((path / name).read_bytes()) != digest:
                    return None
            except OSError:
                return None
        return Entry(fingerprint, path, meta)

    def lookup(self, fingerprint: str) -> Entry | None:
        """The intact entry of ``fingerprint`` (possibly negative), or None when missing or
        damaged. :raises CacheError: the root or entry is owned or writable by another user."""
        self.ensure()
        path = self._entry_dir(fingerprint)
        if not path.exists():
            return None
        self._check_safe(path)
        return self._read(path, fingerprint)

    # writing ----------------------------------------------------------------------------------
    def put(self, fingerprint: str, files: dict[str, bytes], meta: dict) -> Entry:
        """Store ``files`` with ``meta`` (``status`` must be ``ok`` or ``failed``) atomically.

        If an intact entry already exists it is kept and returned; a damaged one is replaced.
        """
        self.ensure()
        final = self._entry_dir(fingerprint)
        tmp = self.base / "tmp" / f"{fingerprint}.{os.getpid()}.{uuid.uuid4().hex}"
        tmp.mkdir(mode=0o700)
        try:
            digests = {}
            for name, data in files.items():
                if "/" in name or name.startswith(".") or name == "meta.json":
                    raise CacheError(f"artifact name {name!r} is not a plain file name")
                (tmp / name).write_bytes(data)
                digests[name] = _sha256(data)
            full = dict(meta, format=FORMAT, fingerprint=fingerprint, files=digests, created=time.time())
            (tmp / "meta.json").write_text(json.dumps(full, indent=1, sort_keys=True))
            with self.lock(fingerprint):
                existing = self._read(final, fingerprint) if final.exists() else None
                if existing is not None and (existing.ok or full["status"] != "ok"):
                    return existing
                final.parent.mkdir(mode=0o700, exist_ok=True)
                if final.exists():  # damaged, or a negative entry being superseded
                    trash = self.base / "tmp" / f"trash.{uuid.uuid4().hex}"
                    os.replace(final, trash)
                    shutil.rmtree(trash, ignore_errors=True)
                os.replace(tmp, final)
            return Entry(fingerprint, final, full)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    # maintenance ------------------------------------------------------------------------------
    def entries(self) -> Iterator[Entry]:
        """Every entry, intact or not (a damaged entry has ``meta == {"status": "damaged"}``)."""
        self.ensure()
        for shard in sorted((self.base / "entries").iterdir()):
            for path in sorted(shard.iterdir()):
                entry = self._read(path, path.name)
                yield entry if entry is not None else Entry(path.name, path, {"status": "damaged"})

    def size_bytes(self) -> int:
        """Total bytes of all entries."""
        return sum(e.size_bytes for e in self.entries())

    def remove(self, entry: Entry) -> None:
        """Delete one entry (under its lock)."""
        with self.lock(entry.fingerprint):
            shutil.rmtree(entry.path, ignore_errors=True)

    def prune(self, *, older_than_s: float | None = None, failed: bool = False, damaged: bool = True) -> int:
        """Remove damaged entries, negative entries (``failed``), and entries created more than
        ``older_than_s`` seconds ago. Returns the number removed."""
        now, n = time.time(), 0
        for e in list(self.entries()):
            status = e.meta.get("status")
            old = older_than_s is not None and now - e.meta.get("created", now) > older_than_s
            if (damaged and status == "damaged") or (failed and status == "failed") or old:
                self.remove(e)
                n += 1
        return n

    def clear(self) -> int:
        """Remove every entry. Returns the number removed."""
        entries = list(self.entries())
        for e in entries:
            self.remove(e)
        return len(entries)

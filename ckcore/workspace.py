"""Scratch memory for kernels that need it (split-K partial tiles, arrival counters...).

ckcore allocates workspaces, never the caller: one zero-initialised buffer per (device, stream,
owner), grown on demand and reused by later launches on that stream (stream order makes reuse
safe). The owner is the kernel family and the workspace's name (e.g. ``gemm_splitk/partials``):
the instances of a family share it, so memory stays bounded by the largest launch rather than
growing with every instance measured. Dispatches on different streams never share one. A kernel
must leave every byte it relies on being zero (counters, atomic accumulators) at zero when it
finishes, so that any instance of its family finds them zero.
"""

from __future__ import annotations

import threading

__all__ = ["Workspaces"]


class Workspaces:
    """Per-(device, stream) zeroed byte buffers."""

    def __init__(self):
        self._buffers: dict[tuple[str, int, str], object] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _stream_key(device) -> tuple[str, int]:
        if device.type != "cuda":
            return (str(device), 0)
        import torch

        return (str(device), torch.cuda.current_stream(device).cuda_stream)

    def get(self, device, nbytes: int, owner: str):
        """A uint8 tensor of at least ``nbytes`` bytes on ``device`` for the current stream and
        ``owner`` (zeroed when allocated; a larger request replaces the buffer)."""
        import torch

        key = (*self._stream_key(device), owner)
        with self._lock:
            buf = self._buffers.get(key)
            if buf is None or buf.numel() < nbytes:
                self._buffers.pop(key, None)
                del buf  # freed on this stream before the larger one is taken
                buf = torch.zeros(max(nbytes, 1 << 16), dtype=torch.uint8, device=device)
                self._buffers[key] = buf
            return buf

"""Scratch memory for kernels that need it (split-K partial tiles, arrival counters...).

ckcore allocates workspaces, never the caller: one zero-initialised buffer per (device, stream,
instance), grown on demand and reused by later launches of that instance on that stream (stream
order makes reuse safe). Dispatches on different streams never share one, and no two instances
share one, so each kernel sees only the state it left. A kernel must leave every byte it relies
on being zero (counters, atomic accumulators) at zero when it finishes.
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
        the instance ``owner`` (zeroed when first allocated)."""
        import torch

        key = (*self._stream_key(device), owner)
        with self._lock:
            buf = self._buffers.get(key)
            if buf is None or buf.numel() < nbytes:
                size = max(nbytes, 2 * buf.numel() if buf is not None else 0, 1 << 16)
                buf = torch.zeros(size, dtype=torch.uint8, device=device)
                self._buffers[key] = buf
            return buf

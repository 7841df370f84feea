"""Global-memory scratch for Triton kernels that need it (device-side TMA descriptors).

Triton asks the allocator set with ``triton.set_allocator`` (a context variable) at launch.
:class:`ScratchLaunch` wraps a kernel so that, when the caller has set none, a torch
allocation on the launch device serves it, without changing the caller's global state.
"""

from __future__ import annotations

__all__ = ["ScratchLaunch"]


def _torch_allocator(device: str):
    import torch

    def alloc(size: int, alignment: int, stream):
        return torch.empty(size, device=device, dtype=torch.int8)

    return alloc


class ScratchLaunch:
    """``wrapper[grid](*args)`` launches ``kernel`` with a torch scratch allocator in scope."""

    def __init__(self, kernel, device: str):
        self.kernel = kernel
        self._alloc = _torch_allocator(device)

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def __getitem__(self, grid):
        from triton.runtime import _allocation

        launch = self.kernel[grid]

        def run(*args, **kwargs):
            token = None
            if isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
                token = _allocation._allocator.set(self._alloc)
            try:
                return launch(*args, **kwargs)
            finally:
                if token is not None:
                    _allocation._allocator.reset(token)

        return run

"""``ckcore bench --plot``: per-problem speedups against the PyTorch path, sorted, with the
geomean marked (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

from .bench import geomean

__all__ = ["plot_speedups"]


def plot_speedups(results: list[dict], path: str | Path, title: str) -> Path:
    """Write a bar chart of ``speedup`` (torch ms / ckcore ms) per result row, sorted, to
    ``path`` (PNG); a dashed line marks the geomean, a solid one parity (1.0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(results, key=lambda r: r["speedup"])
    names = [r.get("name") or r["problem_name"] for r in rows]
    values = [r["speedup"] for r in rows]
    gm = geomean(values)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.22 * len(rows)), 4.5))
    ax.bar(range(len(rows)), values, color=["tab:green" if v >= 1 else "tab:red" for v in values])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(gm, color="tab:blue", linestyle="--", label=f"geomean {gm:.3f}")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=90, fontsize=6)
    ax.set_ylabel("speedup vs PyTorch (torch ms / ckcore ms)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

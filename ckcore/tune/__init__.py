"""``ckcore tune``: measure every supporting instance of an op on many problems, crash-isolated
and resumable, into a dataset for learned selection (CK's tile engine)."""

from .dataset import COLUMNS, SCHEMA, STATUSES, Dataset, describe, provenance
from .generate import generate_problems
from .runner import problem_pairs, tune

__all__ = ["COLUMNS", "SCHEMA", "STATUSES", "Dataset", "describe", "provenance", "generate_problems", "problem_pairs", "tune"]

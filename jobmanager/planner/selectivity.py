"""The share of a table's rows a scan's filters keep, as the planner's estimates need it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

__all__ = ["guess_selectivity"]


def guess_selectivity(filters: Sequence[exp.Expression]) -> float:
    """The share of rows ``filters`` (conjuncts) keep, as Calcite guesses it without statistics
    (``RelMdUtil.guessSelectivity``, which Flink's planner uses): 0.15 for an equality, 0.5
    for a comparison, 0.9 for IS NOT NULL, 0.25 for anything else (LIKE, IN, a function);
    conjuncts multiply, the branches of an OR add up to at most 1."""
    share = 1.0
    for condition in filters:
        share *= _guess(condition)
    return share


def _guess(condition: exp.Expression) -> float:
    if isinstance(condition, exp.Paren):
        return _guess(condition.this)
    if isinstance(condition, exp.And):
        return _guess(condition.left) * _guess(condition.right)
    if isinstance(condition, exp.Or):
        return min(1.0, _guess(condition.left) + _guess(condition.right))
    if isinstance(condition, exp.EQ):
        return 0.15
    if isinstance(condition, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return 0.5
    if isinstance(condition, exp.Not) and isinstance(condition.this, exp.Is):
        return 0.9
    return 0.25

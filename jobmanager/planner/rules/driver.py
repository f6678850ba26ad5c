"""The one place the planner's logical rules run: in order, each over what the last made.

``optimize`` runs ``RULES`` in order, leaving out the ``disabled`` ones, and stops after the
rule named ``upto``; with a ``trace`` list it records, for each rule, whether it changed the
plan and the plan's text before and after, which ``tidal sql --explain --rules`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jobmanager.errors import ConfigurationError
from jobmanager.model.config import RULES_DISABLED
from jobmanager.planner.logical import Node
from jobmanager.planner.rules.context import RuleContext
from jobmanager.planner.rules.logical_rules import RULES, Rule
from jobmanager.planner.rules.plan_text import plan_diff, plan_text

__all__ = ["RuleStep", "check_rule_names", "explain_steps", "optimize"]

_NAMES = tuple(rule.name for rule in RULES)


@dataclass(frozen=True, slots=True)
class RuleStep:
    """One rule's run: ``before`` and ``after`` the plan's text (``plan_text``); a disabled
    rule did not run and changed nothing."""

    rule: str
    changed: bool
    before: str
    after: str
    disabled: bool = False

    def diff(self) -> list[str]:
        return plan_diff(self.before, self.after)


def explain_steps(steps: Iterable[RuleStep], most: int = 40) -> str:
    """Each rule in the order it ran: whether it changed the logical plan, and how (the plan's
    lines it dropped, ``-``, and added, ``+``, at most ``most`` of them)."""
    lines = ["rules (in order; - a line of the logical plan dropped, + added):"]
    for number, step in enumerate(steps, 1):
        state = "disabled" if step.disabled else "changed" if step.changed else "unchanged"
        lines.append(f"{number}. {step.rule}: {state}")
        diff = step.diff()
        lines.extend("   " + line for line in diff[:most])
        if len(diff) > most:
            lines.append(f"   ... {len(diff) - most} more lines")
    return "\n".join(lines) + "\n"


def check_rule_names(names: Iterable[str]) -> None:
    """Refuse a name of ``table.optimizer.rules.disabled`` no rule has, naming it and the
    rules there are."""
    for name in names:
        if name not in _NAMES:
            raise ConfigurationError(RULES_DISABLED.key, _unknown(name))


def _unknown(name: str) -> str:
    return f"unknown rule {name!r}; the rules are {', '.join(_NAMES)}"


def optimize(
    tree: Node,
    context: RuleContext,
    upto: str | None = None,
    disabled: Iterable[str] = (),
    trace: list[RuleStep] | None = None,
) -> Node:
    """``tree`` rewritten by each rule of ``RULES`` not ``disabled``, in order, up to and
    including the rule named ``upto`` (all of them when None)."""
    disabled = set(disabled)
    check_rule_names(disabled)
    if upto is not None and upto not in _NAMES:
        raise ValueError(_unknown(upto))
    for rule in RULES:
        tree = _run(rule, tree, context, rule.name in disabled, trace)
        if rule.name == upto:
            break
    return tree


def _run(rule: Rule, tree: Node, context: RuleContext, off: bool, trace: list | None) -> Node:
    after = tree if off else rule.apply(tree, context)
    if trace is not None:
        before_text, after_text = plan_text(tree), plan_text(after)
        trace.append(RuleStep(rule.name, before_text != after_text, before_text, after_text, off))
    return after

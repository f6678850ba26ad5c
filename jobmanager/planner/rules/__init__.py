"""The planner's logical rewrites as named rules, and the one driver that runs them.

    tree = optimize(tree, RuleContext.from_config(config, ids), disabled=config[RULES_DISABLED.key])

``RULES`` lists them in the order they run (``logical_rules``); ``optimize`` (``driver``) runs
them, stopping after one (``upto``), leaving some out (``disabled``, or the option
``table.optimizer.rules.disabled``) and recording what each changed (``trace``).
"""

from __future__ import annotations

from jobmanager.planner.rules.context import RuleContext
from jobmanager.planner.rules.driver import (
    RuleStep,
    check_rule_names,
    explain_steps,
    optimize,
)
from jobmanager.planner.rules.logical_rules import RULES, Rule
from jobmanager.planner.rules.plan_text import plan_diff, plan_text

__all__ = [
    "RULES",
    "Rule",
    "RuleContext",
    "RuleStep",
    "check_rule_names",
    "explain_steps",
    "optimize",
    "plan_diff",
    "plan_text",
]

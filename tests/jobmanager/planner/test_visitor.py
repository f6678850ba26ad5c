"""The plan walks' one dispatch: a node goes to the method named after its class, or after the
nearest class it derives from, and a kind no method handles is named in the error."""

import pytest

from jobmanager.planner.visitor import PlanVisitor


class Node:
    pass


class Leaf(Node):
    pass


class Special(Leaf):
    pass


class Other(Node):
    pass


class Walk(PlanVisitor):
    def visit_Leaf(self, node):
        return "leaf"

    def visit_Special(self, node):
        return "special"


class Derived(Leaf):
    pass


def test_a_node_goes_to_the_method_of_its_class():
    assert Walk().visit(Leaf()) == "leaf"
    assert Walk().visit(Special()) == "special"


def test_a_derived_kind_without_its_own_method_goes_to_its_base_class_method():
    assert Walk().visit(Derived()) == "leaf"


def test_a_kind_no_method_handles_is_named():
    with pytest.raises(TypeError, match="Walk has no case for a Other"):
        Walk().visit(Other())

"""Encoded sort keys read back as values when each column's type is known (what ``tidal
explain`` shows of a sort's bounds), and a ValueError where it is not; keys and planned pieces
pickled before the types existed still unpickle."""

import datetime
import pickle
from decimal import Decimal

import pytest

from jobmanager.model.operators import SqlOperator
from shuffle.keydecode import decode_key
from shuffle.keyorder import SortKey, encode_key

ROWS = [
    ((SortKey("a", True, False, "bigint"), SortKey("b", sql_type="string")),
     [(5, "x\x00y"), (None, "é"), (-3, None), (2**62, "")]),
    ((SortKey("d", sql_type="double"),), [(1.5,), (-2.25,), (float("inf"),), (0.0,)]),
    ((SortKey("p", True, False, "decimal(15,2)"), SortKey("t", sql_type="date")),
     [(Decimal("12.30"), datetime.date(2022, 1, 8)), (Decimal("-7.05"), None)]),
    ((SortKey("s", True, False, "string"), SortKey("z", sql_type="boolean"),
      SortKey("ts", sql_type="timestamp")),
     [("ab\x00", True, datetime.datetime(2024, 2, 29, 12, 0, 0, 5)), ("", False, None)]),
]  # fmt: skip


@pytest.mark.parametrize("order, rows", ROWS)
def test_a_key_reads_back_as_the_values_it_was_made_of(order, rows):
    for row in rows:
        encoded = [
            (v - datetime.date(1970, 1, 1)).days
            if type(v) is datetime.date
            else (v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
            if isinstance(v, datetime.datetime)
            else v
            for v in row
        ]
        assert decode_key(encode_key(tuple(encoded), order), order) == row


def test_a_key_whose_type_is_unknown_or_bytes_are_not_a_key_is_refused():
    with pytest.raises(ValueError, match="unknown"):
        decode_key(encode_key((1,), (SortKey("x"),)), (SortKey("x"),))
    with pytest.raises(ValueError, match="left after"):
        decode_key(encode_key((1, 2), (SortKey("x"),) * 2), (SortKey("x", sql_type="int"),))


def test_the_type_takes_no_part_in_equality_and_old_pickles_read_back():
    assert SortKey("a", sql_type="int") == SortKey("a")
    old = SortKey.__new__(SortKey)
    old.__setstate__(["a", True, False])  # as pickled before sql_type
    assert (old, old.sql_type) == (SortKey("a", True, False), "")
    piece = SqlOperator.__new__(SqlOperator)
    piece.__setstate__(["SELECT 1", ("in0",), "origin"])
    assert (piece.origin, piece.joins) == ("origin", ())
    again = pickle.loads(pickle.dumps(SortKey("b", sql_type="string")))
    assert again.sql_type == "string"

"""``pyspark.sql.functions`` called over a small table, one program a kind of argument: each
entry a name and a call ``(F, c) -> Column`` (``F`` PySpark's or Tidal's functions, ``c`` its
``col``), all of a group selected at once (``test_functions_behaviour``). A call whose value
differs from run to run (``rand``, ``current_date``) is asked a question whose answer does not
(``rand(1)`` is in [0, 1)). Dates, timestamps, arrays, maps and JSON are made from the table's
columns by the calls themselves, so the table stays the behaviour tests' four columns."""

from __future__ import annotations

__all__ = ["AGGREGATES", "GENERATORS", "GROUPS", "RIDERS", "WINDOWS"]


def _d(F, c):
    return F.date_add(F.to_date(F.lit("2024-01-30")), c("id"))


def _ts(F, c):
    return F.to_timestamp(
        F.concat(F.lit("2024-02-"), F.lpad(c("id").cast("string"), 2, "0"), F.lit(" 10:20:30"))
    )


def _arr(F, c):
    return F.array(c("id"), c("team"), F.lit(10))


def _map(F, c):
    return F.create_map(F.lit("a"), c("id"), F.lit("b"), c("team"))


def _json(F, c):
    return F.concat(F.lit('{"x": '), c("id").cast("string"), F.lit(', "y": [1, 2]}'))


_UNARY_NUMERIC = """abs acos acosh asin asinh atan atanh cbrt ceil ceiling cos cosh cot csc degrees
exp expm1 floor ln log10 log1p log2 negate negative positive radians rint sec sign signum sin
sinh sqrt tan tanh isnan isnull isnotnull zeroifnull""".split()
_UNARY_INTEGER = "bin hex factorial bitwise_not bit_count nullifzero".split()
_UNARY_STRING = """ascii base64 bit_length char_length character_length crc32 initcap lcase ucase
lower length md5 octet_length reverse sha sha1 soundex trim ltrim rtrim btrim is_valid_utf8
make_valid_utf8 validate_utf8 try_validate_utf8 url_encode url_decode try_url_decode
typeof mask sentences quote""".split()
_UNARY_DATE = """day dayofmonth dayofweek dayofyear dayname monthname month quarter year weekday
weekofyear last_day unix_date""".split()
_UNARY_TIMESTAMP = (
    "hour minute second unix_micros unix_millis unix_seconds unix_timestamp "
    "to_unix_timestamp".split()
)
_UNARY_ARRAY = """array_compact array_distinct array_max array_min array_size cardinality size
sort_array array_sort""".split()

NUMERIC = {name: (lambda F, c, n=name: getattr(F, n)("score")) for name in _UNARY_NUMERIC}
NUMERIC |= {name: (lambda F, c, n=name: getattr(F, n)("id")) for name in _UNARY_INTEGER}
NUMERIC |= {
    "e": lambda F, c: F.e(),
    "pi": lambda F, c: F.pi(),
    "atan2": lambda F, c: F.atan2("score", "id"),
    "hypot": lambda F, c: F.hypot("score", "id"),
    "pow": lambda F, c: F.pow("score", "id"),
    "power": lambda F, c: F.power("id", 2),
    "pmod": lambda F, c: F.pmod("id", F.lit(3)),
    "nanvl": lambda F, c: F.nanvl("score", F.lit(9.0)),
    "bround": lambda F, c: F.bround("score", 0),
    "log": lambda F, c: F.log(2.0, c("score")),
    "shiftleft": lambda F, c: F.shiftleft("id", 2),
    "shiftright": lambda F, c: F.shiftright("team", 1),
    "shiftrightunsigned": lambda F, c: F.shiftrightunsigned("team", 1),
    "greatest": lambda F, c: F.greatest("id", "team"),
    "least": lambda F, c: F.least("id", "team"),
    "try_add": lambda F, c: F.try_add("id", "team"),
    "try_subtract": lambda F, c: F.try_subtract("id", "team"),
    "try_multiply": lambda F, c: F.try_multiply("id", "team"),
    "try_divide": lambda F, c: F.try_divide("team", "id"),
    "try_mod": lambda F, c: F.try_mod("team", "id"),
    "width_bucket": lambda F, c: F.width_bucket("score", F.lit(0.0), F.lit(3.0), F.lit(3)),
    "conv": lambda F, c: F.conv(c("id").cast("string"), 10, 2),
    "format_number": lambda F, c: F.format_number("score", 2),
    "bit_get": lambda F, c: F.bit_get("id", F.lit(0)),
    "getbit": lambda F, c: F.getbit("id", F.lit(1)),
    "equal_null": lambda F, c: F.equal_null("team", F.lit(10)),
    "ifnull": lambda F, c: F.ifnull("team", "id"),
    "nvl": lambda F, c: F.nvl("team", "id"),
    "nvl2": lambda F, c: F.nvl2("team", "id", F.lit(0)),
    "nullif": lambda F, c: F.nullif("team", F.lit(10)),
    "coalesce": lambda F, c: F.coalesce("team", "id"),
    "char": lambda F, c: F.char(c("id") + 64),
    "when": lambda F, c: F.when(c("id") > 2, "big").when(c("id") > 1, "mid").otherwise("small"),
    "hash": lambda F, c: F.hash("id", "name"),
    "xxhash64": lambda F, c: F.xxhash64("id", "name"),
    "column": lambda F, c: F.column("id"),
    "expr": lambda F, c: F.expr("id * 2 + team"),
    "call_function": lambda F, c: F.call_function("abs", c("team") - 20),
    "assert_true": lambda F, c: F.assert_true(c("id") > 0),
}

STRING = {name: (lambda F, c, n=name: getattr(F, n)("name")) for name in _UNARY_STRING}
STRING |= {
    "unbase64": lambda F, c: F.unbase64(F.base64("name")),
    "sha2": lambda F, c: F.sha2("name", 256),
    "encode": lambda F, c: F.encode("name", "UTF-8"),
    "decode": lambda F, c: F.decode(F.encode("name", "UTF-8"), "UTF-8"),
    "unhex": lambda F, c: F.unhex(F.hex("name")),
    "concat": lambda F, c: F.concat("name", "name"),
    "concat_ws": lambda F, c: F.concat_ws("-", "name", "id"),
    "contains": lambda F, c: F.contains("name", F.lit("d")),
    "endswith": lambda F, c: F.endswith("name", F.lit("a")),
    "startswith": lambda F, c: F.startswith("name", F.lit("a")),
    "instr": lambda F, c: F.instr("name", "b"),
    "locate": lambda F, c: F.locate("a", "name"),
    "position": lambda F, c: F.position(F.lit("a"), c("name")),
    "left": lambda F, c: F.left("name", F.lit(2)),
    "right": lambda F, c: F.right("name", F.lit(2)),
    "lpad": lambda F, c: F.lpad("name", 5, "*"),
    "rpad": lambda F, c: F.rpad("name", 5, "*"),
    "repeat": lambda F, c: F.repeat("name", 2),
    "replace": lambda F, c: F.replace("name", F.lit("a"), F.lit("x")),
    "translate": lambda F, c: F.translate("name", "ad", "xy"),
    "overlay": lambda F, c: F.overlay("name", F.lit("ZZ"), 2),
    "substr": lambda F, c: F.substr("name", F.lit(2), F.lit(2)),
    "substring": lambda F, c: F.substring("name", 1, 2),
    "substring_index": lambda F, c: F.substring_index("name", "d", 1),
    "split": lambda F, c: F.split("name", "d"),
    "split_part": lambda F, c: F.split_part("name", F.lit("d"), F.lit(1)),
    "levenshtein": lambda F, c: F.levenshtein("name", F.lit("ada")),
    "like": lambda F, c: F.like("name", F.lit("a%")),
    "ilike": lambda F, c: F.ilike("name", F.lit("A%")),
    "rlike": lambda F, c: F.rlike("name", F.lit("^[ab]")),
    "regexp": lambda F, c: F.regexp("name", F.lit("b.b")),
    "regexp_like": lambda F, c: F.regexp_like("name", F.lit("e$")),
    "regexp_count": lambda F, c: F.regexp_count("name", F.lit("[ad]")),
    "regexp_extract": lambda F, c: F.regexp_extract("name", "(a)(d)", 2),
    "regexp_extract_all": lambda F, c: F.regexp_extract_all("name", F.lit("([ad])"), F.lit(1)),
    "regexp_instr": lambda F, c: F.regexp_instr("name", F.lit("d")),
    "regexp_replace": lambda F, c: F.regexp_replace("name", "[ae]", "_"),
    "regexp_substr": lambda F, c: F.regexp_substr("name", F.lit("[bd].")),
    "find_in_set": lambda F, c: F.find_in_set("name", F.lit("bob,ada")),
    "elt": lambda F, c: F.elt(F.lit(2), c("name"), c("name")),
    "format_string": lambda F, c: F.format_string("%s-%d", "name", "id"),
    "printf": lambda F, c: F.printf(F.lit("%s!"), c("name")),
    "str_to_map": lambda F, c: F.str_to_map(F.concat(F.lit("k:"), c("name"))),
    "parse_url": lambda F, c: F.parse_url(
        F.concat(F.lit("http://h.io/p?q="), c("name")), F.lit("QUERY")
    ),
    "try_parse_url": lambda F, c: F.try_parse_url(F.lit("http://h.io/x"), F.lit("HOST")),
    "to_varchar": lambda F, c: F.to_varchar(c("id"), F.lit("0999")),
    "to_number": lambda F, c: F.to_number(F.lit("12.5"), F.lit("99.9")),
    "try_to_number": lambda F, c: F.try_to_number(c("name"), F.lit("99")),
    "to_binary": lambda F, c: F.to_binary(c("name"), F.lit("utf-8")),
    "try_to_binary": lambda F, c: F.try_to_binary(c("name"), F.lit("utf-8")),
    "get_json_object": lambda F, c: F.get_json_object(_json(F, c), "$.x"),
    "json_array_length": lambda F, c: F.json_array_length(F.get_json_object(_json(F, c), "$.y")),
    "json_object_keys": lambda F, c: F.json_object_keys(_json(F, c)),
    "from_json": lambda F, c: F.from_json(_json(F, c), "x INT, y ARRAY<INT>"),
    "to_json": lambda F, c: F.to_json(F.struct("id", "name")),
    "schema_of_json": lambda F, c: F.schema_of_json(F.lit('{"a": 1}')),
    "from_csv": lambda F, c: F.from_csv(F.concat_ws(",", "id", "name"), "a INT, b STRING"),
    "to_csv": lambda F, c: F.to_csv(F.struct("id", "name")),
    "schema_of_csv": lambda F, c: F.schema_of_csv(F.lit("1,abc")),
    "collate": lambda F, c: F.collate("name", "UTF8_LCASE"),
    "collation": lambda F, c: F.collation("name"),
}

DATES = {name: (lambda F, c, n=name: getattr(F, n)(_d(F, c))) for name in _UNARY_DATE}
DATES |= {name: (lambda F, c, n=name: getattr(F, n)(_ts(F, c))) for name in _UNARY_TIMESTAMP}
DATES |= {
    "add_months": lambda F, c: F.add_months(_d(F, c), 1),
    "date_add": lambda F, c: F.date_add(_d(F, c), 3),
    "dateadd": lambda F, c: F.dateadd(_d(F, c), 3),
    "date_sub": lambda F, c: F.date_sub(_d(F, c), 3),
    "date_diff": lambda F, c: F.date_diff(_d(F, c), F.to_date(F.lit("2024-01-01"))),
    "datediff": lambda F, c: F.datediff(F.to_date(F.lit("2024-01-01")), _d(F, c)),
    "date_format": lambda F, c: F.date_format(_ts(F, c), "yyyy/MM/dd HH"),
    "date_from_unix_date": lambda F, c: F.date_from_unix_date("id"),
    "date_part": lambda F, c: F.date_part(F.lit("DAY"), _ts(F, c)),
    "datepart": lambda F, c: F.datepart(F.lit("MONTH"), _d(F, c)),
    "extract": lambda F, c: F.extract(F.lit("HOUR"), _ts(F, c)),
    "date_trunc": lambda F, c: F.date_trunc("month", _ts(F, c)),
    "trunc": lambda F, c: F.trunc(_d(F, c), "year"),
    "next_day": lambda F, c: F.next_day(_d(F, c), "Mon"),
    "make_date": lambda F, c: F.make_date(F.lit(2024), F.lit(2), "id"),
    "make_timestamp": lambda F, c: F.make_timestamp(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "make_timestamp_ntz": lambda F, c: F.make_timestamp_ntz(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "make_timestamp_ltz": lambda F, c: F.make_timestamp_ltz(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "try_make_timestamp": lambda F, c: F.try_make_timestamp(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "try_make_timestamp_ntz": lambda F, c: F.try_make_timestamp_ntz(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "try_make_timestamp_ltz": lambda F, c: F.try_make_timestamp_ltz(
        F.lit(2024), F.lit(2), "id", F.lit(1), F.lit(2), F.lit(3)
    ),
    "make_interval": lambda F, c: F.make_interval(F.lit(1), F.lit(2), F.lit(0), "id").cast(
        "string"
    ),
    "try_make_interval": lambda F, c: F.try_make_interval(F.lit(1), F.lit(2)).cast("string"),
    "make_dt_interval": lambda F, c: F.make_dt_interval("id", F.lit(2)).cast("string"),
    "make_ym_interval": lambda F, c: F.make_ym_interval(F.lit(1), "id").cast("string"),
    "months_between": lambda F, c: F.months_between(_ts(F, c), F.to_date(F.lit("2023-11-02"))),
    "from_unixtime": lambda F, c: F.from_unixtime(c("id") * 86400),
    "from_utc_timestamp": lambda F, c: F.from_utc_timestamp(_ts(F, c), "Asia/Tokyo"),
    "to_utc_timestamp": lambda F, c: F.to_utc_timestamp(_ts(F, c), "Asia/Tokyo"),
    "convert_timezone": lambda F, c: F.convert_timezone(
        F.lit("UTC"), F.lit("Asia/Tokyo"), _ts(F, c)
    ),
    "timestamp_seconds": lambda F, c: F.timestamp_seconds("id"),
    "timestamp_millis": lambda F, c: F.timestamp_millis("id"),
    "timestamp_micros": lambda F, c: F.timestamp_micros("id"),
    "to_date": lambda F, c: F.to_date(F.lit("2024-05-06")),
    "try_to_date": lambda F, c: F.try_to_date("name"),
    "to_timestamp": lambda F, c: F.to_timestamp(F.lit("2024-05-06 01:02:03")),
    "try_to_timestamp": lambda F, c: F.try_to_timestamp(c("name")),
    "to_timestamp_ltz": lambda F, c: F.to_timestamp_ltz(F.lit("2024-05-06 01:02:03")),
    "to_timestamp_ntz": lambda F, c: F.to_timestamp_ntz(F.lit("2024-05-06 01:02:03")),
    "timestamp_add": lambda F, c: F.timestamp_add("HOUR", F.lit(5), _ts(F, c)),
    "timestamp_diff": lambda F, c: F.timestamp_diff(
        "MINUTE", _ts(F, c), F.to_timestamp(F.lit("2024-03-01"))
    ),
    "window": lambda F, c: F.window(_ts(F, c), "2 days").start,
    "current_date": lambda F, c: F.current_date().isNotNull(),
    "curdate": lambda F, c: F.curdate().isNotNull(),
    "current_timestamp": lambda F, c: F.current_timestamp().isNotNull(),
    "now": lambda F, c: F.now().isNotNull(),
    "localtimestamp": lambda F, c: F.localtimestamp().isNotNull(),
    "current_timezone": lambda F, c: F.current_timezone(),
}

ARRAYS = {name: (lambda F, c, n=name: getattr(F, n)(_arr(F, c))) for name in _UNARY_ARRAY}
ARRAYS |= {
    "array": lambda F, c: F.array("id", "team"),
    "array_append": lambda F, c: F.array_append(_arr(F, c), c("id")),
    "array_prepend": lambda F, c: F.array_prepend(_arr(F, c), 0),
    "array_contains": lambda F, c: F.array_contains(_arr(F, c), 1),
    "array_except": lambda F, c: F.array_except(_arr(F, c), F.array(F.lit(10))),
    "array_intersect": lambda F, c: F.array_intersect(_arr(F, c), F.array(F.lit(10), F.lit(1))),
    "array_union": lambda F, c: F.array_union(_arr(F, c), F.array(F.lit(7))),
    "array_insert": lambda F, c: F.array_insert(_arr(F, c), 2, F.lit(99)),
    "array_join": lambda F, c: F.array_join(_arr(F, c), "/", "?"),
    "array_position": lambda F, c: F.array_position(_arr(F, c), 10),
    "array_remove": lambda F, c: F.array_remove(_arr(F, c), 10),
    "array_repeat": lambda F, c: F.array_repeat("id", 2),
    "arrays_overlap": lambda F, c: F.arrays_overlap(_arr(F, c), F.array(F.lit(30))),
    "arrays_zip": lambda F, c: F.arrays_zip(_arr(F, c), F.array("name")),
    "element_at": lambda F, c: F.element_at(_arr(F, c), 2),
    "try_element_at": lambda F, c: F.try_element_at(_arr(F, c), F.lit(9)),
    "get": lambda F, c: F.get(_arr(F, c), 0),
    "flatten": lambda F, c: F.flatten(F.array(_arr(F, c), F.array("id"))),
    "slice": lambda F, c: F.slice(_arr(F, c), 2, 2),
    "sequence": lambda F, c: F.sequence(F.lit(1), "id"),
    "shuffle": lambda F, c: F.size(F.shuffle(_arr(F, c))),
    "exists": lambda F, c: F.exists(_arr(F, c), lambda x: x > 20),
    "forall": lambda F, c: F.forall(_arr(F, c), lambda x: x > 2),
    "filter": lambda F, c: F.filter(_arr(F, c), lambda x: x > 2),
    "transform": lambda F, c: F.transform(_arr(F, c), lambda x: x * 2),
    "aggregate": lambda F, c: F.aggregate(
        _arr(F, c), F.lit(0), lambda a, x: a + F.coalesce(x, F.lit(0))
    ),
    "reduce": lambda F, c: F.reduce(_arr(F, c), F.lit(0), lambda a, x: a + F.coalesce(x, F.lit(0))),
    "zip_with": lambda F, c: F.zip_with(_arr(F, c), _arr(F, c), lambda x, y: x + y),
    "create_map": _map,
    "map_concat": lambda F, c: F.map_concat(_map(F, c), F.create_map(F.lit("z"), F.lit(0))),
    "map_contains_key": lambda F, c: F.map_contains_key(_map(F, c), "a"),
    "map_entries": lambda F, c: F.map_entries(_map(F, c)),
    "map_keys": lambda F, c: F.map_keys(_map(F, c)),
    "map_values": lambda F, c: F.map_values(_map(F, c)),
    "map_filter": lambda F, c: F.map_filter(_map(F, c), lambda k, v: v > 2),
    "map_from_arrays": lambda F, c: F.map_from_arrays(F.array(F.lit("k")), F.array("id")),
    "map_from_entries": lambda F, c: F.map_from_entries(F.array(F.struct(F.lit("k"), c("id")))),
    "map_zip_with": lambda F, c: F.map_zip_with(_map(F, c), _map(F, c), lambda k, a, b: a + b),
    "transform_keys": lambda F, c: F.transform_keys(_map(F, c), lambda k, v: F.upper(k)),
    "transform_values": lambda F, c: F.transform_values(_map(F, c), lambda k, v: v + 1),
    "named_struct": lambda F, c: F.named_struct(F.lit("a"), c("id"), F.lit("b"), c("name")),
    "struct": lambda F, c: F.struct("id", "name"),
}

AGGREGATES = {
    name: (lambda F, c, n=name: getattr(F, n)("score"))
    for name in """any_value
approx_count_distinct array_agg collect_list collect_set count_distinct kurtosis skewness median
min mode std stddev stddev_pop stddev_samp var_pop var_samp variance sum_distinct try_avg
try_sum first_value last_value""".split()
}
AGGREGATES |= {
    name: (lambda F, c, n=name: getattr(F, n)("id")) for name in "bit_and bit_or bit_xor".split()
}
AGGREGATES |= {
    name: (lambda F, c, n=name: getattr(F, n)(c("id") > 1))
    for name in "bool_and bool_or every some count_if".split()
}
AGGREGATES |= {
    name: (lambda F, c, n=name: getattr(F, n)("score", "id"))
    for name in """corr covar_pop
covar_samp regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy
regr_syy""".split()
}
AGGREGATES |= {
    "approx_percentile": lambda F, c: F.approx_percentile("score", 0.5),
    "percentile": lambda F, c: F.percentile("score", F.lit(0.5)),
    "percentile_approx": lambda F, c: F.percentile_approx("score", [0.25, 0.75], 100),
    "max_by": lambda F, c: F.max_by("name", "id"),
    "min_by": lambda F, c: F.min_by("name", "id"),
    "listagg": lambda F, c: F.size(F.split(F.listagg("name", ","), ",")),
    "string_agg": lambda F, c: F.length(F.string_agg("name", "")),
    "histogram_numeric": lambda F, c: F.size(F.histogram_numeric("id", F.lit(2))),
    "hll_sketch_agg": lambda F, c: F.hll_sketch_estimate(F.hll_sketch_agg("id")),
    "count_min_sketch": lambda F, c: F.length(
        F.count_min_sketch("id", F.lit(0.5), F.lit(0.5), F.lit(1))
    ),
    "bitmap_construct_agg": lambda F, c: F.bitmap_count(
        F.bitmap_construct_agg(F.bitmap_bit_position("id"))
    ),
}
AGGREGATES |= {
    name: (lambda F, c, n=name: F.sort_array(getattr(F, n)("score")))
    for name in "array_agg collect_list collect_set".split()
}
AGGREGATES |= {
    name: (lambda F, c, n=name: getattr(F, n)("team"))
    for name in "any_value first_value last_value".split()
}
# hll_sketch_estimate, hll_union, bitmap_count, bitmap_bit_position ride along above

WINDOWS = {
    "cume_dist": lambda F, c: F.cume_dist(),
    "dense_rank": lambda F, c: F.dense_rank(),
    "rank": lambda F, c: F.rank(),
    "percent_rank": lambda F, c: F.percent_rank(),
    "ntile": lambda F, c: F.ntile(2),
    "nth_value": lambda F, c: F.nth_value("name", 2),
}

MISC = {
    "rand": lambda F, c: F.rand(1).between(0, 1),
    "randn": lambda F, c: F.randn(1).isNotNull(),
    "uniform": lambda F, c: F.uniform(F.lit(0), F.lit(10), F.lit(3)).between(0, 10),
    "randstr": lambda F, c: F.length(F.randstr(F.lit(4), F.lit(1))),
    "monotonically_increasing_id": lambda F, c: F.monotonically_increasing_id() >= 0,
    "spark_partition_id": lambda F, c: F.spark_partition_id() >= 0,
    "aes_encrypt": lambda F, c: F.aes_decrypt(
        F.aes_encrypt("name", F.lit("k" * 16)), F.lit("k" * 16)
    ).cast("string"),
    "try_aes_decrypt": lambda F, c: F.try_aes_decrypt(
        F.aes_encrypt("name", F.lit("k" * 16)), F.lit("k" * 16)
    ).cast("string"),
    "current_catalog": lambda F, c: F.current_catalog(),
    "current_database": lambda F, c: F.current_database(),
    "current_schema": lambda F, c: F.current_schema(),
    "current_user": lambda F, c: F.current_user().isNotNull(),
    "user": lambda F, c: F.user().isNotNull(),
    "session_user": lambda F, c: F.session_user().isNotNull(),
    "version": lambda F, c: F.version().isNotNull(),
    "java_method": lambda F, c: F.java_method(F.lit("java.lang.Math"), F.lit("abs"), c("id") - 3),
    "reflect": lambda F, c: F.reflect(F.lit("java.lang.Math"), F.lit("abs"), c("id") - 3),
    "try_reflect": lambda F, c: F.try_reflect(F.lit("java.lang.Math"), F.lit("abs"), c("id") - 3),
    "try_parse_json": lambda F, c: F.to_json(F.try_parse_json(c("name"))),
    "to_variant_object": lambda F, c: F.to_json(F.to_variant_object(F.struct("id"))),
    "from_xml": lambda F, c: F.from_xml(
        F.concat(F.lit("<r><a>"), c("id").cast("string"), F.lit("</a></r>")), "a INT"
    ),
    "to_xml": lambda F, c: F.to_xml(F.struct("id")),
    "schema_of_xml": lambda F, c: F.schema_of_xml(F.lit("<r><a>1</a></r>")),
    "xpath": lambda F, c: F.xpath(F.lit("<a><b>1</b><b>2</b></a>"), F.lit("a/b/text()")),
    **{
        name: (lambda F, c, n=name: getattr(F, n)(F.lit("<a><b>3</b></a>"), F.lit("a/b")))
        for name in """xpath_boolean xpath_double xpath_float xpath_int xpath_long xpath_number
       xpath_short xpath_string""".split()
    },
}

GROUPS = {"numeric": NUMERIC, "string": STRING, "dates": DATES, "arrays": ARRAYS, "misc": MISC}

AGGREGATES |= {
    "bitmap_or_agg": lambda F, c: F.bitmap_count(F.bitmap_or_agg(F.unhex(F.lit("0102")))),
    "bitmap_and_agg": lambda F, c: F.bitmap_count(F.bitmap_and_agg(F.unhex(F.lit("0302")))),
}
# called inside other calls above, not on their own
RIDERS = """hll_sketch_estimate hll_union bitmap_count bitmap_bit_position bitmap_bucket_number
to_json lit col aes_decrypt""".split()
MISC["bitmap_bucket_number"] = lambda F, c: F.bitmap_bucket_number("id")
AGGREGATES["hll_union"] = lambda F, c: F.hll_sketch_estimate(
    F.hll_union(F.hll_sketch_agg("id"), F.hll_sketch_agg("team"))
)

# a generator stands alone in its SELECT, an aggregate of aggregates needs two: one program each
GENERATORS = {
    "explode": lambda p, F: p.select("id", F.explode(F.array("id", "team"))),
    "explode_outer": lambda p, F: p.select("id", F.explode_outer(F.split("name", "d"))),
    "posexplode_outer": lambda p, F: p.select("id", F.posexplode_outer(F.array("team"))),
    "stack": lambda p, F: p.select("id", F.stack(F.lit(2), "team", "id")),
    "json_tuple": lambda p, F: p.select(
        "id", F.json_tuple(F.to_json(F.struct("id", "name")), "id", "name")
    ),
    "hll_union_agg": lambda p, F: (
        p.groupBy("team")
        .agg(F.hll_sketch_agg("id").alias("s"))
        .agg(F.hll_sketch_estimate(F.hll_union_agg("s")).alias("n"))
    ),
    "grouping": lambda p, F: p.cube("team").agg(F.grouping("team").alias("g"), F.count("*")),
}

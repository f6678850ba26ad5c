"""``benchmarks/fuzz.py`` at a tiny size, so the script never rots: its ``main`` in this
process, on the tests' one Ray cluster and in their one SparkSession (which it gets by
``getOrCreate``), as ``tests/examples/test_benchmarks.py`` runs the other scripts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz.py"
KEYS = ["queries", "same", "refused", "different", "skipped", "tidal_s", "pyspark_s", "ratio"]


def load():
    spec = importlib.util.spec_from_file_location("tidal_benchmark_fuzz", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_refuses_an_unknown_family_before_starting_anything(capsys):
    with pytest.raises(SystemExit):
        load().main(["--queries", "1", "--families", "joins", "nope"])
    assert "unknown families ['nope']" in capsys.readouterr().err


@pytest.mark.runtime
@pytest.mark.spark
def test_the_fuzz_benchmark_runs_at_a_tiny_size(ray_cluster, spark_session, monkeypatch, capsys):
    monkeypatch.setattr(spark_session, "stop", lambda: None)  # the suite's session stays
    figures = load().main(
        [
            "--queries",
            "4",
            "--seed",
            "3",
            "--families",
            "joins",
            "aggregates",
            "df_columns",
            "--shrink-checks",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert json.loads(out.strip().splitlines()[-1]) == figures
    assert list(figures) == KEYS
    assert figures["queries"] == 4
    assert sum(figures[k] for k in ("same", "refused", "different", "skipped")) == 4
    assert figures["tidal_s"] > 0 and figures["pyspark_s"] > 0 and figures["ratio"] > 0
    assert "4 cases of seed 3" in out

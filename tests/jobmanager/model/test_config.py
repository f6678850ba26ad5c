import pytest

from jobmanager.errors import ConfigurationError
from jobmanager.model.config import Configuration, parse_duration_ms, parse_memory_size


def test_defaults_follow_flink():
    config = Configuration()
    prefix = "execution.batch.adaptive.auto-parallelism."
    assert config[prefix + "max-parallelism"] == 128
    assert config[prefix + "avg-data-volume-per-task"] == 64 * 2**20  # Spark's, not Flink's 16
    assert config[prefix + "source-data-volume-per-task"] == 128 * 2**20
    assert config[prefix + "default-source-parallelism"] is None
    assert config["parallelism.default"] == 1


def test_unknown_key_names_the_key_and_suggests():
    with pytest.raises(ConfigurationError, match="'parallelism.defualt': unknown option"):
        Configuration({"parallelism.defualt": 3})
    with pytest.raises(ConfigurationError, match="did you mean 'taskmanager.numberOfTaskSlots'"):
        Configuration({"numberOfTaskSlots": 3})


@pytest.mark.parametrize(
    "key, value",
    [
        ("parallelism.default", 0),
        ("parallelism.default", "many"),
        ("restart-strategy.type", "sometimes"),
        ("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "lots"),
        ("restart-strategy.exponential-delay.jitter-factor", 2),
    ],
)
def test_bad_values_name_the_key(key, value):
    with pytest.raises(ConfigurationError, match=f"{key!r}: bad value"):
        Configuration({key: value})


def test_units_and_overrides(tmp_path):
    assert parse_duration_ms("1 min") == 60_000 and parse_duration_ms("250ms") == 250
    assert parse_memory_size("16 mb") == 16 << 20 and parse_memory_size("1g") == 1 << 30
    path = tmp_path / "tidal.yaml"
    path.write_text("parallelism:\n  default: 4\ntaskmanager.numberOfTaskSlots: 2\n")
    config = Configuration.from_yaml(str(path)).with_dynamic_properties(["parallelism.default=8"])
    assert config["parallelism.default"] == 8 and config["taskmanager.numberOfTaskSlots"] == 2
    with pytest.raises(ConfigurationError, match="expected key=value"):
        config.with_dynamic_properties(["oops"])
    missing = str(tmp_path / "missing.yaml")
    with pytest.raises(ConfigurationError, match=f"^{missing}: no such configuration file$"):
        Configuration.from_yaml(missing)


@pytest.mark.parametrize(
    "text, where, problem",
    [
        ("parallelism.default: 2\nslots: [1, 2\n", ":3:1", "not valid YAML"),
        ("- a\n- b\n", "", "maps option keys to values"),
        ("parallelism:\n  defualt: 2\n", "", "'parallelism.defualt': unknown option"),
    ],
)
def test_a_broken_configuration_file_is_named_with_its_line(tmp_path, text, where, problem):
    path = tmp_path / "tidal.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as raised:
        Configuration.from_yaml(str(path))
    assert str(raised.value).startswith(f"{path}{where}: ") and problem in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "options, named",
    [
        (
            {
                "execution.batch.adaptive.auto-parallelism.min-parallelism": 10,
                "execution.batch.adaptive.auto-parallelism.max-parallelism": 5,
            },
            "'execution.batch.adaptive.auto-parallelism.min-parallelism': 10 may not be above "
            "'execution.batch.adaptive.auto-parallelism.max-parallelism' (5)",
        ),
        (
            {"restart-strategy.exponential-delay.initial-backoff": "2 min"},
            "'restart-strategy.exponential-delay.initial-backoff': 120000 may not be above "
            "'restart-strategy.exponential-delay.max-backoff' (60000)",
        ),
        (
            {"heartbeat.interval": "30 s"},
            "'heartbeat.interval': 30000 must be below 'heartbeat.timeout' (30000)",
        ),
    ],
)
def test_options_that_contradict_each_other_are_refused_naming_both(options, named):
    from jobmanager import JobGraph
    from jobmanager.core.admission import validate_job
    from jobmanager.errors import ConfigurationError

    g = JobGraph("j")
    g.add_vertex("a", parallelism=1)
    with pytest.raises(ConfigurationError) as refused:
        validate_job(g, Configuration(options))
    assert str(refused.value) == f"configuration option {named}"


SKEW = "execution.batch.adaptive.skewed-join-optimization."
FLINK_SKEW = "table.optimizer.skewed-join-optimization."


def test_flinks_skewed_join_keys_set_tidals_options():
    c = Configuration({FLINK_SKEW + "strategy": "FORCED", FLINK_SKEW + "skewed-threshold": "1 mb"})
    assert c.to_dict() == {SKEW + "strategy": "forced", SKEW + "skewed-threshold": 1 << 20}
    assert c[FLINK_SKEW + "strategy"] == c[SKEW + "strategy"] == "forced"
    assert c.is_set(FLINK_SKEW + "skewed-threshold") and not c.is_set(FLINK_SKEW + "skewed-factor")
    later = c.with_dynamic_properties([SKEW + "strategy=none"])
    assert later[FLINK_SKEW + "strategy"] == "none"  # the later setting wins, under either key
    yaml_like = Configuration({FLINK_SKEW + "skewed-factor": 2})
    assert yaml_like[SKEW + "skewed-factor"] == 2.0


def test_both_keys_of_one_option_with_different_values_are_refused_naming_both():
    with pytest.raises(ConfigurationError) as refused:
        Configuration({FLINK_SKEW + "strategy": "forced", SKEW + "strategy": "none"})
    assert FLINK_SKEW + "strategy" in str(refused.value) and SKEW + "strategy" in str(refused.value)
    same = Configuration({FLINK_SKEW + "strategy": "auto", SKEW + "strategy": "auto"})
    assert same[SKEW + "strategy"] == "auto"

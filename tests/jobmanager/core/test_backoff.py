from jobmanager.core.scheduler.backoff import (
    ExponentialDelayRestartBackoffTimeStrategy,
    FixedDelayRestartBackoffTimeStrategy,
    NoRestartBackoffTimeStrategy,
    make_restart_backoff,
)
from jobmanager.model.config import RESTART_STRATEGY, Configuration


def test_no_restart_never_restarts():
    strategy = NoRestartBackoffTimeStrategy()
    strategy.notify_failure(0)
    assert not strategy.can_restart()


def test_fixed_delay_counts_attempts():
    strategy = FixedDelayRestartBackoffTimeStrategy(attempts=2, delay_ms=500)
    for _ in range(2):
        strategy.notify_failure(0)
        assert strategy.can_restart() and strategy.backoff_ms() == 500
    strategy.notify_failure(0)
    assert not strategy.can_restart()


def exponential(**kw):
    args = dict(
        initial_ms=1000, max_ms=8000, multiplier=2.0, reset_ms=60_000, jitter=0.0, attempts=10
    )
    args.update(kw)
    return ExponentialDelayRestartBackoffTimeStrategy(**args)


def test_exponential_delay_grows_to_its_maximum():
    strategy = exponential()
    delays, now = [], 0
    for _ in range(6):
        strategy.notify_failure(now)
        delays.append(strategy.backoff_ms())
        now += strategy.backoff_ms() + 1
    assert delays == [1000, 2000, 4000, 8000, 8000, 8000]


def test_failures_within_the_backoff_window_count_once():
    strategy = exponential()
    strategy.notify_failure(0)
    strategy.notify_failure(10)  # same incident (a TaskManager took many tasks down)
    assert strategy.backoff_ms() == 1000 and strategy.attempt == 1


def test_backoff_starts_over_after_a_quiet_period():
    strategy = exponential(reset_ms=5000)
    strategy.notify_failure(0)
    strategy.notify_failure(1500)
    assert strategy.backoff_ms() == 2000
    strategy.notify_failure(100_000)
    assert strategy.backoff_ms() == 1000 and strategy.attempt == 1


def test_exponential_attempts_run_out():
    strategy = exponential(attempts=2)
    now = 0
    for _ in range(3):
        strategy.notify_failure(now)
        now += strategy.backoff_ms() + 1
    assert not strategy.can_restart()


def test_jitter_is_bounded_and_replayable():
    delays = []
    for _ in range(2):
        strategy = exponential(jitter=0.1, seed=42)
        strategy.notify_failure(0)
        delays.append(strategy.backoff_ms())
    assert delays[0] == delays[1] and 900 <= delays[0] <= 1100


def test_configuration_selects_the_strategy():
    assert isinstance(
        make_restart_backoff(Configuration({RESTART_STRATEGY.key: "fixeddelay"})),
        FixedDelayRestartBackoffTimeStrategy,
    )
    default = make_restart_backoff(Configuration())
    assert isinstance(default, ExponentialDelayRestartBackoffTimeStrategy)
    assert (default.initial_ms, default.max_ms, default.multiplier) == (1000, 60_000, 1.5)

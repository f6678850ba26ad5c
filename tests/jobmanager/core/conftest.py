"""The core's tests need no cluster and no clock: make sure none sneaks in."""

import pytest
import structlog


@pytest.fixture(autouse=True)
def pure(monkeypatch):
    import threading
    import time

    sleep = time.sleep

    def forbidden(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return sleep(*args, **kwargs)  # another suite's background thread (py4j, Ray)
        raise AssertionError("the scheduling core's tests must not sleep")

    monkeypatch.setattr(time, "sleep", forbidden)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    yield
    structlog.reset_defaults()

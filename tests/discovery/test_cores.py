"""Threads for a build come from what other processes leave idle, not from a load
average that this process's own work raises."""

from __future__ import annotations

from collections.abc import Callable

from plugyard.discovery.cores import SAMPLE_S, Reading, idle_cores


def readings(*values: Reading | None) -> Callable[[], Reading | None]:
    queue = list(values)
    return lambda: queue.pop(0)


def test_a_machine_busy_only_with_this_process_counts_as_idle() -> None:
    # 0.4 s of busy time in 0.2 s, all of it this process's own threads.
    read = readings(Reading(10.0, 3.0, 100.0), Reading(10.4, 3.4, 100.0 + SAMPLE_S))
    waited: list[float] = []
    assert idle_cores(read, waited.append, cores=2) == 2
    assert waited == [SAMPLE_S]


def test_a_core_another_process_keeps_busy_is_left_to_it() -> None:
    read = readings(Reading(10.0, 3.0, 100.0), Reading(10.2, 3.0, 100.0 + SAMPLE_S))
    assert idle_cores(read, lambda _: None, cores=2) == 1
    read = readings(Reading(10.0, 3.0, 100.0), Reading(10.2, 3.0, 100.0 + SAMPLE_S))
    assert idle_cores(read, lambda _: None, cores=4) == 3


def test_a_saturated_machine_still_leaves_one_thread() -> None:
    read = readings(Reading(10.0, 3.0, 100.0), Reading(10.8, 3.0, 100.0 + SAMPLE_S))
    assert idle_cores(read, lambda _: None, cores=2) == 1


def test_one_core_is_never_watched() -> None:
    assert idle_cores(readings(), lambda _: None, cores=1) == 1


def test_without_counters_the_load_average_decides() -> None:
    assert 1 <= idle_cores(readings(None), lambda _: None, cores=2) <= 2

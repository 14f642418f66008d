"""The arena's intervals against known values."""

import math

import pytest

from bots.arena.stats import mean_interval, t95, wilson


def test_t_quantiles_match_tables() -> None:
    assert t95(1) == pytest.approx(12.706)
    assert t95(30) == pytest.approx(2.042)
    assert t95(40) == pytest.approx(2.021, abs=1e-3)
    assert t95(120) == pytest.approx(1.980, abs=1e-3)
    assert t95(10**6) == pytest.approx(1.960, abs=1e-3)


def test_wilson_interval() -> None:
    interval = wilson(95, 100)
    assert interval.estimate == pytest.approx(0.95)
    assert interval.low == pytest.approx(0.8883, abs=1e-4)
    assert interval.high == pytest.approx(0.9785, abs=1e-4)
    # At the edge it stays inside [0, 1] and is not degenerate.
    perfect = wilson(20, 20)
    assert perfect.high == 1.0 and 0.8 < perfect.low < 1.0
    assert math.isnan(wilson(0, 0).estimate)


def test_mean_interval() -> None:
    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    assert interval.estimate == 2.5
    half = 3.182 * math.sqrt((5 / 3) / 4)
    assert interval.low == pytest.approx(2.5 - half, abs=1e-3)
    assert interval.excludes_zero
    assert not mean_interval([-1.0, 1.0, -2.0, 2.0]).excludes_zero
    assert math.isinf(mean_interval([3.0]).high)

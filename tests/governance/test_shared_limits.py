"""``host.rate_limit`` shared by replicas: two hosts over one set of buckets admit the
limit once between them, and a refusal is ``rate_limited``."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.execution.host import CapabilityError
from plugyard.governance.core import Governance
from plugyard.governance.host.shared_limits import SharedRateLimit
from plugyard.store.rate_buckets import SqlRateBuckets
from plugyard.store.store import Store


def test_two_replicas_share_one_bucket() -> None:
    buckets = SqlRateBuckets(Store.open(":memory:"), clock=lambda: 100.0)
    one, two = (SharedRateLimit(buckets, "p", capacity=3, per_second=0) for _ in range(2))
    admitted = [limit.try_acquire() for limit in (one, two, one, two, one)]
    assert admitted == [True, True, True, False, False]
    with pytest.raises(CapabilityError) as refused:
        two.limit()
    assert refused.value.code == "rate_limited"


def test_governance_over_a_store_shares_its_limits(tmp_path: Path) -> None:
    with Store.open(tmp_path / "yard.db") as store:
        governance = Governance.over(store, environ={})
        assert governance.rate_limits is not None
        assert isinstance(governance.rate_limits("p"), SharedRateLimit)

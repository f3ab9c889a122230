"""A feed run on the Ray backend: a Ray task, run as the feed's owner on a worker."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from plugyard.yard import Settings, Yard

PROBE = Path(__file__).resolve().parents[1] / "execution" / "ray_plugins"
POLICY = """\
version: 1
subjects:
  bob: {roles: [user]}
grants:
  - {to: "role:user", plugin: ray-probe, effect: allow}
"""


def test_a_feed_runs_as_its_owner_in_a_ray_task(tmp_path: Path, ray_local: None) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = Settings(database=str(tmp_path / "yard.db"), builtins=False,
                        plugin_dirs=(PROBE,), policy_file=policy,
                        execution="ray:local")  # fmt: skip
    with Yard.from_settings(settings) as yard:
        row = yard.feeds.add(owner="bob", plugin_id="ray-probe", params={"value": 7},
                             interval_s=3600)  # fmt: skip
        tick = asyncio.run(yard.feeds.run(row.id))
        assert (tick.status, tick.error_code) == ("success", None)
        stored = yard.feeds.get(row.id).last_result
        assert stored["data"]["value"] == 7
        assert stored["data"]["pid"] != os.getpid()  # not a heavy operation: a feed run
        assert yard.governance is not None
        events = [(e.subject, e.operation, e.status) for e in yard.governance.audit.tail(20)
                  if e.kind == "call"]  # fmt: skip
        assert events == [("bob", "here", "success")]

"""What an operator manages on a running yard: policy and approvals (administration),
scheduled feeds, and installed plugin packages.

Administration and feeds exist only in a governed yard, packages only where there is
a packages folder; asking for one that does not exist is ``capability_unavailable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugyard.deferred import Runtimes, part
from plugyard.errors import PlugyardError
from plugyard.registry.registry import Registry
from plugyard.yard.execution import Execution
from plugyard.yard.governing import Governing
from plugyard.yard.runtimes import forget
from plugyard.yard.settings import Settings, packages_root
from plugyard.yard.start import check

if TYPE_CHECKING:
    from plugyard.feeds.scheduler import FeedScheduler
    from plugyard.governance.admin import Administration
    from plugyard.registry.packages import PackageManager


class Management:
    """Administration, feeds and packages, each built on first use."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        runtimes: Runtimes,
        execution: Execution,
        governing: Governing,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.runtimes = runtimes
        self.execution = execution
        self.governing = governing

    @part
    def admin(self) -> Administration:
        """Policy, approvals, actions, secrets and the audit log (docs/governance.md)."""
        from plugyard.governance.admin import Administration

        governance, policy = self.governing.governance, self.governing.policy
        if governance is None or policy is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        return Administration(governance, policy, self.execution.executor, self.registry.list)

    @part
    def packages(self) -> PackageManager:
        """Install, list and remove plugin packages (docs/packages.md)."""
        from plugyard.registry.packages import Installer, PackageManager
        from plugyard.runtimes.python.guard import scan_folder

        root = packages_root(self.settings)
        if root is None:
            raise PlugyardError("this yard has no packages folder (Settings.packages_dir)",
                                code="capability_unavailable")  # fmt: skip
        from plugyard.registry.packages.venvs import VenvPolicy

        s = self.settings
        venvs = VenvPolicy(s.plugin_venvs, s.venv_index_url, s.venv_wheels)
        installer = Installer(root, scan=scan_folder, venvs=venvs)
        installer.sweep()  # what a killed install, upgrade or removal left behind
        runtimes = self.runtimes
        return PackageManager(
            installer, self.registry, lambda p: check(p, runtimes), lambda i: forget(runtimes, i)
        )

    @part
    def feeds(self) -> FeedScheduler:
        """Scheduled operations, run as their owner (docs/governance.md#feeds)."""
        from plugyard.feeds.scheduler import FeedScheduler

        governance = self.governing.governance
        if governance is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        execution = self.execution
        return FeedScheduler(execution.executor, governance.feeds, governance.kv, self.registry,
                             runner=execution.fanout())  # fmt: skip

"""Governance of a yard: the policy in force, the governance stores behind the host
API, and what a subject may see.

Everything that asks "may this subject do this" reads the one policy book built here;
an ungoverned yard (``Settings.governed=False``) has none, and every answer is yes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from plugyard.deferred import part
from plugyard.discovery.query import CanSee, allow_all
from plugyard.governance.policy.sight import Sight
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.store.store import Store
from plugyard.types import Caller
from plugyard.yard.finding import Finding
from plugyard.yard.network import Network
from plugyard.yard.settings import Settings

if TYPE_CHECKING:
    from plugyard.governance.core import Governance
    from plugyard.governance.policy.book import PolicyBook
    from plugyard.kb.service import KnowledgeBase


class Governing:
    """The policy, the governance it drives, and the knowledge base of host.kb."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        registry: Registry,
        network: Network,
        finding: Finding,
    ) -> None:
        self.settings = settings
        self.store = store
        self.registry = registry
        self.network = network
        self.finding = finding  # its embedder is the knowledge base's

    @part
    def policy(self) -> PolicyBook | None:
        """The policy in force (``None`` when not governed); a policy file given in the
        settings is applied when this is first read."""
        if not self.settings.governed:
            return None
        from plugyard.governance.policy.book import PolicyBook, facts_from
        from plugyard.store.policies import SqlPolicyRepository

        return PolicyBook(SqlPolicyRepository(self.store), facts=facts_from(self.registry.find),
                          file=self.settings.policy_file)  # fmt: skip

    @part
    def governance(self) -> Governance | None:
        policy = self.policy
        if policy is None:
            return None
        from plugyard.governance.core import Governance

        governance = Governance.over(
            self.store,
            http_client=self.network.outbound,
            egress=_egress(policy),
            approval_ttl_s=lambda: policy.approval_settings().ttl_s,
            kb=self.knowledge,
        )
        if self.settings.auth_providers is not None and governance.identities is not None:
            from plugyard.governance.identities.config import providers_from_file

            vault = governance.vault
            for provider in providers_from_file(
                self.settings.auth_providers, lambda name: vault.resolve(name, None, "system")
            ):
                governance.identities.providers.register(provider)
        return governance

    @part
    def knowledge(self) -> KnowledgeBase:
        """The knowledge base behind Shu's host.kb, host.query and host.ocr (docs/shu.md),
        embedding with discovery's embedder (loaded on the first ingestion or search)."""
        from plugyard.kb.cage import Cage, CagedExtractor
        from plugyard.kb.ocr import TesseractEngine
        from plugyard.kb.service import KnowledgeBase
        from plugyard.store.kb import SqlKbRepository

        # Documents are read in worker processes under budgets and limits, never here.
        cage = Cage(self.settings.kb_cage, ocr=TesseractEngine().spec())
        extractor = CagedExtractor(cage, self.settings.kb_budgets)
        return KnowledgeBase(SqlKbRepository(self.store), lambda: self.finding.discovery.embedder,
                             extractor)  # fmt: skip

    def rights(self, subject: str | None, roles: Sequence[str] = ()) -> CanSee:
        """What ``subject`` may see in searches and listings: the operations the policy
        lets it call (a plugin shows when one of its operations does). Without
        governance, everything."""
        book = self.policy
        if book is None:
            return allow_all
        who = Caller(subject, tuple(roles))

        def can_see(plugin_id: str, operation: str | None) -> bool:
            return operation is None or book.visible(who, plugin_id, operation)

        return can_see

    def sight(self, subject: str | None, roles: Sequence[str] = ()) -> Sight | None:
        """What ``subject`` may call under the policy in force, for listings that ask
        about every plugin of the registry (``Sight.shows`` is :meth:`visible` under
        :meth:`rights`, without a Casbin question per plugin); ``None`` without
        governance, where everything shows."""
        book = self.policy
        return None if book is None else book.sight(Caller(subject, tuple(roles)))

    def shows(
        self, subject: str | None, roles: Sequence[str] = ()
    ) -> Callable[[RegisteredPlugin], bool]:
        """For a listing that walks the registry: whether ``subject`` sees a plugin, as
        :meth:`visible` under :meth:`rights` answers, through one :meth:`sight`."""
        sight = self.sight(subject, roles)
        if sight is None:
            return lambda plugin: True
        return lambda plugin: sight.shows(plugin.descriptor)

    def visible(self, plugin: RegisteredPlugin, can_see: CanSee) -> bool:
        """Whether a listing shows ``plugin`` to a caller with ``can_see``."""
        ops = plugin.descriptor.operations
        return can_see(plugin.id, None) and (
            not ops or any(can_see(plugin.id, op.id) for op in ops)
        )


def _egress(policy: PolicyBook) -> Callable[[RegisteredPlugin], tuple[str, ...]]:
    """Each plugin's ``host.http`` allowlist, as the policy in force says."""

    def egress(plugin: RegisteredPlugin) -> tuple[str, ...]:
        asked = plugin.descriptor.config.get("egress")
        declared = tuple(h for h in asked if isinstance(h, str)) if isinstance(asked, list) else ()
        # What an untrusted manifest asks for is not granted by asking: until a loaded
        # policy lists its hosts, its host.http reaches nothing (Shu: "security review
        # needed before enabling host.http ... in untrusted plugins").
        return policy.egress(plugin.id, declared if plugin.trust == "trusted" else ())

    return egress

"""The one exception tree of plugyard and its closed set of error codes.

This module imports nothing else from the package, so every layer can raise and catch
these. Every code is stable, documented in ``docs/errors.md`` (a test keeps the two in
step) and maps to exactly one HTTP status, which the server uses in a single handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """What one error code means and which HTTP status carries it."""

    http_status: int
    summary: str


# The closed set. Adding a code is an API change: document it in docs/errors.md.
ERROR_CODES: dict[str, ErrorSpec] = {
    # Manifest documents (the contract layer).
    "manifest_too_large": ErrorSpec(413, "The document exceeds the size or node-count cap."),
    "manifest_encoding": ErrorSpec(422, "The document is not valid UTF-8 text."),
    "manifest_syntax": ErrorSpec(422, "The document is not well-formed YAML, JSON or Python."),
    "manifest_yaml_tag": ErrorSpec(422, "The YAML uses a tag outside the JSON-compatible set."),
    "manifest_duplicate_key": ErrorSpec(422, "A mapping repeats a key."),
    "manifest_non_finite": ErrorSpec(422, "A number is NaN or infinite."),
    "manifest_too_deep": ErrorSpec(422, "The document nests deeper than allowed."),
    "manifest_invalid_key": ErrorSpec(422, "A mapping key is not a string."),
    "manifest_unknown_dialect": ErrorSpec(422, "No manifest dialect matches the document."),
    "manifest_empty": ErrorSpec(422, "The document holds no manifest."),
    "manifest_missing_field": ErrorSpec(422, "A required field is absent."),
    "manifest_invalid_value": ErrorSpec(422, "A field has the wrong type or an invalid value."),
    "manifest_invalid_schema": ErrorSpec(422, "A JSON Schema in the manifest is not valid."),
    "manifest_no_python_manifest": ErrorSpec(
        422, "The Python file assigns no literal PLUGIN_MANIFEST dict."
    ),
    "manifest_not_found": ErrorSpec(404, "The manifest path does not exist."),
    "unsupported_type": ErrorSpec(422, "The plugin family is not one plugyard supports."),
    "binding_undeclared": ErrorSpec(
        422, "An x-binding asks for a secret, identity or variable the plugin may not have."
    ),
    "export_unsupported": ErrorSpec(422, "The descriptor cannot be written in that format."),
    # Registry and store.
    "plugin_not_found": ErrorSpec(404, "No plugin has that id (or the caller may not see it)."),
    "operation_not_found": ErrorSpec(404, "The plugin has no operation of that name."),
    "duplicate_plugin": ErrorSpec(409, "Another source already registered that plugin id."),
    "version_conflict": ErrorSpec(409, "The registration would replace a newer version."),
    "plugin_load_error": ErrorSpec(422, "The plugin's code or manifest could not be loaded."),
    "store_error": ErrorSpec(
        503,
        "The database could not be read or written (unreachable, or a fault); nothing was "
        "half-written, and a replica reconnects by itself once the server is back.",
    ),
    "schema_too_new": ErrorSpec(
        500, "The database was migrated by a newer plugyard; upgrade this replica to start."
    ),
    # Discovery (docs/discovery.md).
    "invalid_query": ErrorSpec(
        400, "The search query is empty or not text, or k or a filter is out of range."
    ),
    "unknown_search": ErrorSpec(
        404, "The search id is unknown, expired, or was given to another subject."
    ),
    "learning_refused": ErrorSpec(
        403, "Only an authenticated subject's calls and feedback teach discovery."
    ),
    # The model layer (docs/llm.md).
    "llm_unavailable": ErrorSpec(
        503, "The chat model cannot answer: no server, refused, or the model file is missing."
    ),
    "llm_timeout": ErrorSpec(504, "The chat model did not answer before the deadline."),
    "llm_invalid_answer": ErrorSpec(
        502, "The chat model's answer is not valid JSON or does not match the schema."
    ),
    "model_digest_mismatch": ErrorSpec(
        503, "The model file is not the pinned one (its SHA-256 or size differs): not loaded."
    ),
    "model_not_found": ErrorSpec(
        404, "The OpenAI-compatible endpoint does not serve the model the request names."
    ),
    "llm_context_exceeded": ErrorSpec(
        413, "The conversation and the tools offered are longer than the model's context."
    ),
    "input_too_large": ErrorSpec(
        413, "The text for the model is over its cap (details: pointer, limit_chars, chars)."
    ),
    # The call path. A plugin failing is data in the result envelope; these codes say how.
    "invalid_request": ErrorSpec(400, "The call itself is malformed."),
    "invalid_parameters": ErrorSpec(422, "The parameters do not match the operation's schema."),
    "argument_ungrounded": ErrorSpec(
        422, "An argument the operation needs is not stated in the request."
    ),
    "plugin_unavailable": ErrorSpec(503, "The plugin is registered but cannot run now."),
    "plugin_error": ErrorSpec(502, "The plugin raised or reported an error."),
    "invalid_output": ErrorSpec(502, "The plugin returned something that is not a result."),
    "output_validation_error": ErrorSpec(500, "The plugin's data breaks its output schema."),
    "timeout": ErrorSpec(504, "The call did not finish before its deadline."),
    "step_failed": ErrorSpec(
        500, "A step the application added to the call path raised (details: step, hook)."
    ),
    "cancelled": ErrorSpec(499, "The caller cancelled the call."),
    "permission_denied": ErrorSpec(
        403, "Policy does not allow this call, or the caller lacks the management right."
    ),
    "budget_exceeded": ErrorSpec(429, "The call's LLM budget is below what the plugin may use."),
    "capability_not_granted": ErrorSpec(
        403, "The plugin used a host capability its manifest does not declare."
    ),
    "capability_unavailable": ErrorSpec(501, "This host does not offer that host capability."),
    "wrapper_protocol_error": ErrorSpec(
        502, "A subprocess wrapper broke the wire protocol; the worker was replaced."
    ),
    "plugin_load_failed": ErrorSpec(
        503, "The plugin's code does not load (its module throws on import, or its factory)."
    ),
    "mrp_wrapper_no_result": ErrorSpec(
        502, "An MRP-VM (DS016) wrapper exited without writing its '## Plugin Result' document."
    ),
    # 502, not 503: the call reached a worker that failed under it (a bad gateway), and
    # whether it ran partly is unknown, so it is no plain "try again later".
    "worker_lost": ErrorSpec(
        502, "The worker running the call died or was killed before it answered."
    ),
    # The execution backend (docs/scaling.md#ray): fan-out and heavy operations on Ray.
    "execution_backend_unavailable": ErrorSpec(
        503, "The execution backend (a Ray cluster) cannot be reached; the call did not run."
    ),
    # Telemetry (docs/telemetry.md).
    "telemetry_unavailable": ErrorSpec(
        503, "Telemetry export is configured but cannot be set up (SDK or exporter missing)."
    ),
    # Governance (docs/governance.md).
    "policy_invalid": ErrorSpec(
        422, "The policy document is malformed or unknown; nothing is allowed."
    ),
    "invalid_receipt": ErrorSpec(403, "The approval receipt is unknown or not for this request."),
    "receipt_expired": ErrorSpec(410, "The approval receipt expired before it was used."),
    "receipt_used": ErrorSpec(409, "The approval receipt was already used."),
    "approval_pending": ErrorSpec(409, "The approval has not been decided yet."),
    "approval_rejected": ErrorSpec(403, "The approver rejected the request."),
    "approval_not_found": ErrorSpec(404, "No pending approval has that id."),
    "approval_decided": ErrorSpec(409, "The approval was already approved or rejected."),
    "idempotency_conflict": ErrorSpec(
        409, "The idempotency key was used before with other parameters."
    ),
    "idempotency_unknown": ErrorSpec(
        409, "An earlier call with this key did not finish; its outcome is unknown."
    ),
    "missing_secrets": ErrorSpec(424, "A secret the operation requires is not configured."),
    "secret_not_found": ErrorSpec(404, "No secret of that name is visible to the caller."),
    "secrets_key_error": ErrorSpec(500, "The secrets master key is missing or does not match."),
    "audit_key_error": ErrorSpec(500, "The audit key is missing or unreadable."),
    "invalid_feed_op": ErrorSpec(400, "The operation may not run in a feed."),
    "invalid_schedule": ErrorSpec(400, "The feed schedule is not a valid interval or cron."),
    "feed_not_found": ErrorSpec(404, "No feed has that id."),
    "egress_denied": ErrorSpec(403, "The URL is outside the plugin's egress allowlist."),
    "rate_limited": ErrorSpec(
        429,
        "A rate limit bucket is empty: the plugin's, or the caller's model requests "
        "(details: retry_after_s; the Retry-After header over HTTP).",
    ),
    "internal_error": ErrorSpec(500, "An unexpected failure inside plugyard."),
    # The service and outbound HTTP (docs/server.md).
    "outbound_blocked": ErrorSpec(
        403, "The URL reaches an address outbound connections may not (loopback, private …)."
    ),
    "unauthenticated": ErrorSpec(401, "No valid API key was presented."),
    "key_not_found": ErrorSpec(404, "No active API key has that id."),
    "csrf_invalid": ErrorSpec(403, "A console form post lacks this session's CSRF token."),
    "request_too_large": ErrorSpec(413, "The request body exceeds the server's cap."),
    "unsupported_media_type": ErrorSpec(415, "The request body is not of a type the route reads."),
    "route_not_found": ErrorSpec(404, "No route has that path."),
    "method_not_allowed": ErrorSpec(405, "The route does not take that HTTP method."),
    # Pipelines (docs/pipelines.md lists the fault codes inside pipeline_invalid).
    "pipeline_invalid": ErrorSpec(422, "The pipeline document has faults; each is listed."),
    "pipeline_not_found": ErrorSpec(404, "No pipeline has that name."),
    "pipeline_run_not_found": ErrorSpec(404, "No pipeline run has that id."),
    # Plugin packages (docs/packages.md lists the reasons inside package_invalid).
    "package_invalid": ErrorSpec(
        422, "The package zip is unsafe or malformed; details.reason says how."
    ),
    "package_refused": ErrorSpec(
        422, "The import guard found forbidden imports in an untrusted package."
    ),
    "package_not_found": ErrorSpec(404, "No installed package has that name."),
    # MCP servers as plugins (docs/mcp.md).
    "tool_changed": ErrorSpec(
        409, "The MCP tool's definition changed since it was approved; an admin must re-approve."
    ),
    "sandbox_unavailable": ErrorSpec(
        503, "Untrusted code needs the bubblewrap sandbox, which is unavailable here."
    ),
    # The rest of the Shu contract (docs/shu.md): knowledge base, identities, actions, venvs.
    "document_too_large": ErrorSpec(
        413, "The document exceeds the knowledge base's size cap (or unpacks to more)."
    ),
    "document_too_complex": ErrorSpec(
        422,
        "Reading the document would exceed an extraction budget or its worker's limits; "
        "details.budget, value and limit say which.",
    ),
    "unsupported_format": ErrorSpec(
        422, "The document is of a format the knowledge base cannot read."
    ),
    "document_unreadable": ErrorSpec(
        422, "The document is encrypted or corrupt; details.reason says which."
    ),
    "empty_extraction": ErrorSpec(
        422, "No text could be extracted from the document (under its OCR mode)."
    ),
    "kb_access_denied": ErrorSpec(403, "The plugin may not write (or read) that knowledge base."),
    "ocr_unavailable": ErrorSpec(503, "No OCR engine is installed on this host."),
    "missing_identity": ErrorSpec(
        424, "The operation needs a connected account the caller has not connected."
    ),
    "insufficient_scopes": ErrorSpec(
        403, "The caller's connected account lacks scopes the operation needs."
    ),
    "auth_provider_unknown": ErrorSpec(
        404, "The operation names an identity provider this host does not configure."
    ),
    "auth_provider_error": ErrorSpec(
        502, "The identity provider failed, hung or answered something that is not a token."
    ),
    "auth_field_in_parameters": ErrorSpec(
        422, "A parameter schema declares an auth field (auth_mode, user_email …) Shu v1 forbids."
    ),
    "account_not_found": ErrorSpec(404, "The caller has no connected account at that provider."),
    "action_not_found": ErrorSpec(
        404, "The plugin does not list an action of that name for this caller."
    ),
    "venv_disabled": ErrorSpec(
        403, "Per-plugin virtual environments are off (an operator's policy)."
    ),
    "venv_failed": ErrorSpec(
        422, "The plugin's requirements could not be installed into its virtual environment."
    ),
    # Reasoning flows (docs/reasoning.md): a request that fails ends in a planner outcome
    # record with ``finalStatus: failure`` and one of these codes as its ``error``.
    "validation_rejected": ErrorSpec(
        422, "Every plan's answer was rejected by a validator (MRP-VM VALIDATION_REJECTED)."
    ),
    "stage_exhausted": ErrorSpec(422, "No plugin of a reasoning stage produced a usable result."),
    "plan_invalid": ErrorSpec(
        422, "No planner produced a plan naming usable plugins of the right families."
    ),
    "family_mismatch": ErrorSpec(
        422, "The plugin named for a reasoning stage is not of that stage's family."
    ),
    "decomposition_too_deep": ErrorSpec(
        422, "A goal solver kept asking for decomposition past the frame depth limit."
    ),
    "session_not_found": ErrorSpec(
        404, "No reasoning session has that id (or it belongs to another subject)."
    ),
    "outcome_not_found": ErrorSpec(404, "No planner outcome record has that request id."),
    "invalid_source_name": ErrorSpec(
        400, "A source name is empty, over 200 characters, or holds a control character."
    ),
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One fault (or warning) found in a document.

    ``pointer`` is an RFC 6901 JSON pointer into the document as written; ``document``
    is the index of the document inside a multi-document YAML stream.
    """

    code: str
    pointer: str
    message: str
    document: int = 0

    def as_dict(self) -> dict[str, str | int]:
        return {
            "code": self.code,
            "pointer": self.pointer,
            "message": self.message,
            "document": self.document,
        }


class PlugyardError(Exception):
    """Base of every error plugyard raises on purpose."""

    default_code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        self.message = message

    @property
    def http_status(self) -> int:
        spec = ERROR_CODES.get(self.code)
        return spec.http_status if spec else 500


class ManifestError(PlugyardError):
    """A manifest was refused; ``problems`` lists every fault with its pointer."""

    default_code = "manifest_invalid_value"

    def __init__(self, problems: list[Problem] | tuple[Problem, ...], *, path: str = "") -> None:
        if not problems:
            raise ValueError("ManifestError needs at least one problem")
        first = problems[0]
        where = f"{path}: " if path else ""
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            f"{where}{first.code} at '{first.pointer}': {first.message}{more}", code=first.code
        )
        self.problems = tuple(problems)
        self.path = path


class ExportError(PlugyardError):
    """A descriptor cannot be expressed in the requested format."""

    default_code = "export_unsupported"


class UnsupportedTypeError(PlugyardError):
    """A plugin family outside tool, sd, kb, gs, val and plan."""

    default_code = "unsupported_type"


class NotFoundError(PlugyardError):
    """A plugin or operation that does not exist (``plugin_not_found``,
    ``operation_not_found``)."""

    default_code = "plugin_not_found"


class RegistryError(PlugyardError):
    """A registration the registry refuses (``duplicate_plugin``, ``version_conflict``,
    ``unsupported_type``)."""

    default_code = "duplicate_plugin"


class StoreError(PlugyardError):
    """The database failed; nothing was half-written."""

    default_code = "store_error"


class CallError(PlugyardError):
    """Misuse of the call API (``invalid_request``); a failing plugin is not an error but
    a result with ``status: error``."""

    default_code = "invalid_request"


class GovernanceError(PlugyardError):
    """A governance request refused: a malformed policy (``policy_invalid``), a bad
    receipt, an unknown approval or feed, a secret that cannot be read, a feed op that may
    not run unattended (``invalid_feed_op``)."""

    default_code = "policy_invalid"


class PipelineError(PlugyardError):
    """A pipeline refused before it ran (``pipeline_invalid``, with every fault in
    ``problems``), or one that is not there (``pipeline_not_found``,
    ``pipeline_run_not_found``). A pipeline that fails while running is not an error: its
    run has ``status: error`` and keeps its trace."""

    default_code = "pipeline_invalid"

    def __init__(
        self, message: str, *, code: str | None = None, problems: tuple[Problem, ...] = ()
    ) -> None:
        super().__init__(message, code=code)
        self.problems = problems


class ReasoningError(PlugyardError):
    """A reasoning request refused before it ran (``invalid_request``, ``request_too_large``)
    or a session or record that is not there (``session_not_found``,
    ``outcome_not_found``). A request that fails while running is not an error: its
    planner outcome record has ``finalStatus: failure`` and the code. ``problems`` point
    at the faulty part of the request (``invalid_source_name``)."""

    default_code = "invalid_request"

    def __init__(
        self, message: str, *, code: str | None = None, problems: tuple[Problem, ...] = ()
    ) -> None:
        super().__init__(message, code=code)
        self.problems = problems


class ModelRefused(PlugyardError):
    """A request that would reach the yard's model, refused before it does:
    ``permission_denied`` (no model right in the policy), ``rate_limited`` (the caller's
    model requests, ``retry_after_s``) or ``input_too_large`` (``pointer``,
    ``limit_chars``). ``details`` says which budget, as the error envelope shows it."""

    default_code = "permission_denied"

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.details: dict[str, Any] = dict(details or {})


class PackageError(PlugyardError):
    """A plugin package refused (``package_invalid`` with a ``reason``; ``package_refused``
    with the import guard's findings) or not installed (``package_not_found``). The
    server answers ``details`` in the error envelope."""

    default_code = "package_invalid"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        reason: str | None = None,
        findings: tuple[dict[str, object], ...] = (),
    ) -> None:
        super().__init__(message, code=code)
        self.reason = reason
        self.findings = findings

    @property
    def details(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.findings:
            out["findings"] = [dict(f) for f in self.findings]
        return out

"""Shu v1 refuses auth fields in parameter schemas: a Shu plugin whose schema (written in
the manifest's code, read by get_schema) declares one is refused at registration with
the pointer of the property; other dialects' parameters are theirs to name."""

from __future__ import annotations

import textwrap
from pathlib import Path

from plugyard.manifest.auth_fields import faults
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.yard import Settings, Yard

MANIFEST = """
name: legacy_mail
version: 0.9.0
entrypoints:
  legacy_mail: legacy_mail_pkg.plugin:Plugin
"""
CODE = """
class Plugin:
    def get_schema(self):
        return {"type": "object", "properties": {
            "auth_mode": {"type": "string", "enum": ["user", "domain_delegate"]},
            "impersonate_email": {"type": "string"}}}

    async def execute(self, params, context, host):
        return {"status": "success", "data": {}}
"""


def test_the_rule_names_each_field_with_its_pointer() -> None:
    schema = {"type": "object", "properties": {"user_email": {}, "query": {}}}
    op = Operation(id="execute", parameters=schema)
    found = faults(PluginDescriptor(id="p", name="p", operations=(op,)))
    assert [(f.code, f.pointer) for f in found] == [
        ("auth_field_in_parameters", "/operations/0/parameters/properties/user_email")
    ]


def test_a_shu_plugin_with_auth_fields_is_refused_at_registration(tmp_path: Path) -> None:
    folder = tmp_path / "legacy"
    (folder / "legacy_mail_pkg").mkdir(parents=True)
    (folder / "manifest.yaml").write_text(textwrap.dedent(MANIFEST))
    (folder / "legacy_mail_pkg" / "__init__.py").write_text("")
    (folder / "legacy_mail_pkg" / "plugin.py").write_text(textwrap.dedent(CODE))
    settings = Settings(database=":memory:", builtins=False, plugin_dirs=(folder,), governed=False)
    with Yard.from_settings(settings) as yard:
        assert yard.registry.find("legacy_mail") is None
        codes = [(f.code, f.message) for f in yard.report.failures]
        assert codes and codes[0][0] == "auth_field_in_parameters"
        assert "/operations/0/parameters/properties/auth_mode" in codes[0][1]

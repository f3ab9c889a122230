"""Tool definitions for OpenAI, Anthropic and MCP."""

from __future__ import annotations

import re

import mcp.types
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard import Operation, Placement, PluginDescriptor, export_tools, tool_names

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def plugin(pid: str, *ops: str, **kw: object) -> PluginDescriptor:
    return PluginDescriptor.model_validate(
        {
            "id": pid,
            "name": pid,
            "operations": [{"id": o} for o in ops] or [{"id": "execute"}],
            **kw,
        },
        strict=False,
    )


def test_single_generic_operation_is_named_after_its_plugin() -> None:
    assert export_tools([plugin("weather")], "anthropic")[0]["name"] == "weather"


def test_operations_are_named_plugin__operation() -> None:
    names = [t["name"] for t in export_tools([plugin("mail", "send", "read")], "anthropic")]
    assert names == ["mail__send", "mail__read"]


def test_long_names_are_cut_to_64_with_a_stable_hash() -> None:
    long_id = "com.example." + "very-long-segment." * 8 + "plugin"
    first = export_tools([plugin(long_id, "op")], "openai")[0]["function"]["name"]
    again = export_tools([plugin(long_id, "op")], "openai")[0]["function"]["name"]
    assert first == again
    assert NAME.match(first)


def test_collisions_get_suffixes_from_their_own_ids_only() -> None:
    a, b = plugin("a.b", "x"), plugin("a_b", "x")
    names = tool_names([(a, a.operations[0]), (b, b.operations[0])])
    assert len(set(names.values())) == 2
    c = plugin("c", "x")
    with_c = tool_names([(a, a.operations[0]), (b, b.operations[0]), (c, c.operations[0])])
    assert with_c["a.b/x"] == names["a.b/x"]
    assert with_c["c/x"] == "c__x"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(
                alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs")),
                min_size=1,
                max_size=90,
            ),
            st.sampled_from(["execute", "run", "get", "a/b", "x" * 70]),
        ),
        min_size=1,
        max_size=30,
        unique=True,
    )
)
def test_names_are_valid_unique_and_deterministic(pairs: list[tuple[str, str]]) -> None:
    plugins = [plugin(pid, op) for pid, op in pairs]
    ids = {p.id for p in plugins}
    if len(ids) != len(plugins):
        return
    names = tool_names([(p, p.operations[0]) for p in plugins])
    assert all(NAME.match(n) for n in names.values())
    assert len(set(names.values())) == len(names)
    assert tool_names([(p, p.operations[0]) for p in reversed(plugins)]) == names


def test_host_bound_parameters_are_hidden_from_the_model() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "email": {"type": "string", "x-binding": "identity:email"},
        },
        "required": ["q", "email"],
    }
    p = PluginDescriptor(id="p", name="p", operations=(Operation(id="execute", parameters=schema),))
    params = export_tools([p], "openai")[0]["function"]["parameters"]
    assert list(params["properties"]) == ["q"]
    assert params["required"] == ["q"]
    assert "email" in p.operations[0].parameters["properties"]  # the descriptor is untouched


def test_mcp_tools_are_valid_for_the_official_sdk() -> None:
    out = {"type": "object", "properties": {"t": {"type": "number"}}}
    p = PluginDescriptor(
        id="thermo",
        name="Thermo",
        placement=Placement(capabilities=("TOOL", "MODEL")),
        operations=(
            Operation(id="read", output_schema=out),
            Operation(id="wipe", effect="destructive", requires_approval=True),
        ),
    )
    tools = [mcp.types.Tool.model_validate(t) for t in export_tools([p], "mcp")]
    assert tools[0].output_schema == out
    assert tools[0].annotations is not None and tools[0].annotations.read_only_hint is True
    assert tools[1].annotations is not None and tools[1].annotations.destructive_hint is True
    assert tools[1].meta is not None and tools[1].meta["io.plugyard/groups"] == ["TOOL", "MODEL"]


def test_undefined_placement_is_the_undefined_group() -> None:
    tool = export_tools([plugin("x")], "mcp")[0]
    assert tool["_meta"]["io.plugyard/groups"] == ["Undefined"]


def test_a_reserved_name_is_never_given_to_an_operation() -> None:
    ask, mail = plugin("ask"), plugin("mail", "send")
    plain = tool_names([(ask, ask.operations[0]), (mail, mail.operations[0])])
    assert plain["ask/execute"] == "ask"
    names = tool_names([(ask, ask.operations[0]), (mail, mail.operations[0])], {"ask"})
    assert names["ask/execute"] != "ask" and NAME.match(names["ask/execute"])
    assert names["mail/send"] == "mail__send"
    again = tool_names([(ask, ask.operations[0])], {"ask", "mail__send"})
    assert again["ask/execute"] == names["ask/execute"]

"""The four report formats on a hand-built report: escaping, statuses, the JSON shape."""

from __future__ import annotations

import json

from generator.diff.formats import FORMATS, render
from generator.diff.formats.github import escape_data, escape_property
from generator.diff.formats.markdown import cell
from generator.diff.model import Change, EnvReport, EnvVersion, Report


def sample() -> Report:
    report = Report(base="main", head="working tree", fail_on="breaking-code")
    env = EnvReport(env="demo_env", status="changed", version=EnvVersion("1.0.0", "1.0.0"))
    env.changes = [
        Change(
            rule="enum.value-added",
            change_class="breaking",
            role="observation",
            file="schemas/demo_env/observation.schema.json",
            pointer="/properties/a|b/enum",
            message='enum values added: "x,y: 100%"\nsecond line',
            line=7,
            witness=None,
            status="fails",
        ),
        Change(
            rule="code.attribute-removed",
            change_class="breaking-code",
            role="action",
            file="schemas/demo_env/action.schema.json",
            pointer="/properties/b",
            message="DemoAction.b is no longer generated",
            status="ignored",
            ignore_reason="nobody uses b",
        ),
        Change(
            rule="property.added",
            change_class="safe",
            role="action",
            file="schemas/demo_env/action.schema.json",
            pointer="/properties/c",
            message="property 'c' added",
        ),
    ]
    env.stale_ignores = ["x.toml entry 1: type.changed at /y"]
    report.envs.append(env)
    return report


def test_json_shape() -> None:
    data = json.loads(render(sample(), "json"))
    assert set(data) == {"schema_version", "base", "head", "fail_on", "result", "counts", "envs"}
    assert data["result"] == "fail"
    assert data["counts"] == {"breaking": 1, "breaking-code": 1, "safe": 1, "failing": 1}
    first, second, third = data["envs"][0]["changes"]
    assert first["has_witness"] is True and first["witness"] is None  # null is a witness
    assert "witness" not in third and third["has_witness"] is False
    assert second["ignore_reason"] == "nobody uses b"
    assert set(first) == {
        "rule",
        "class",
        "status",
        "role",
        "file",
        "line",
        "pointer",
        "path",
        "message",
        "note",
        "has_witness",
        "witness",
    }


def test_github_annotations_are_escaped() -> None:
    out = render(sample(), "github").splitlines()
    assert out[0].startswith(
        "::error file=schemas/demo_env/observation.schema.json,line=7,"
        "title=envgen diff demo_env%3A enum.value-added (breaking%2C fails)::"
    )
    assert '100%25"%0Asecond line' in out[0] and "%0Awitness: null" in out[0]
    assert out[1].startswith("::notice ") and "ignored: nobody uses b" in out[1]
    assert out[2].startswith("::warning title=envgen diff%3A stale ignore::")
    assert out[-1].startswith("FAIL: 1 change(s) fail")
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25" and escape_data("a\r\nb") == "a%0D%0Ab"


def test_markdown_cells_cannot_break_the_table() -> None:
    out = render(sample(), "markdown")
    assert "/properties/a\\|b/enum" in out
    assert "second line" in out and "\nsecond line" not in out
    assert cell("<b>|`x`") == "&lt;b&gt;\\|&#96;x&#96;"
    assert "Ignore entries that matched nothing" in out


def test_text_lists_every_change() -> None:
    out = render(sample(), "text")
    assert "FAIL" in out and "ignored because: nobody uses b" in out
    assert "schemas/demo_env/observation.schema.json:7 /properties/a|b/enum" in out
    assert "witness: null" in out


def test_every_format_renders() -> None:
    assert FORMATS == ("text", "json", "markdown", "github")
    for fmt in FORMATS:
        assert render(sample(), fmt).endswith("\n")

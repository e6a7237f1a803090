"""The benchmark's synthetic envs stay valid input (so `make bench` measures real work)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.synthetic import touch_env, write_envs
from generator.codegen.output import build, check, write
from generator.schema.loader import Layout


def test_synthetic_envs_generate_and_a_touch_rerenders_one(tmp_path: Path) -> None:
    names = write_envs(tmp_path, 3)
    layout = Layout.at(tmp_path)
    result = build(layout)
    assert sorted(e.name for e in result.envs) == names
    write(layout, result)
    touch_env(tmp_path, names[1])
    again = build(layout)
    assert [e.name for e in again.envs] == [names[1]]
    assert "added_later" in again.files[f"{names[1]}/models.py"]
    write(layout, again)
    touch_env(tmp_path, names[1], field="added_again")  # a second edit of the same env
    third = build(layout)
    assert [e.name for e in third.envs] == [names[1]]
    assert "added_again" in third.files[f"{names[1]}/models.py"]
    write(layout, third)
    assert check(layout, build(layout, use_cache=False)).ok

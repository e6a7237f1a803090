"""The templates' compiled code is reused between runs, and only ever for the very same input."""

from __future__ import annotations

import marshal
import pickle
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.bccache import bc_magic

from generator.codegen import render
from generator.codegen.cache import CACHE_DIR
from generator.codegen.template_cache import TEMPLATES_FOLDER, TemplateCache, cache_key
from generator.schema.loader import Layout, load_env
from tests.helpers import write_env

SETTINGS = {"trim_blocks": True, "keep_trailing_newline": True}


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "hello.jinja").write_text("hello {{ name }}\n")
    (folder / "bye.jinja").write_text("{% if name %}bye {{ name }}{% endif %}\n")
    return folder


def _out(tmp_path: Path) -> Path:
    out = tmp_path / "generated"
    out.mkdir(exist_ok=True)
    return out


class Compiles:
    """Notes each template Jinja compiles from source (a cache miss each)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        compile_ = jinja2.Environment.compile

        def counting(env: jinja2.Environment, source: str, name: str, *args: Any) -> Any:
            self.names.append(name)
            return compile_(env, source, name, *args)

        monkeypatch.setattr(jinja2.Environment, "compile", counting)


def _render(templates: Path, out: Path, name: str = "hello.jinja", key: str | None = None) -> str:
    """`name` rendered by a fresh environment (as a new run makes) over `out`'s cache."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        bytecode_cache=TemplateCache(out, key or cache_key(templates, SETTINGS)),
        **SETTINGS,  # type: ignore[arg-type]
    )
    return env.get_template(name).render(name="ada")


def _cache_files(out: Path) -> list[Path]:
    return sorted((out / CACHE_DIR / TEMPLATES_FOLDER).glob("*/*"))


def test_a_second_run_loads_the_compiled_code_instead_of_compiling(
    tmp_path: Path, templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _out(tmp_path)
    compiles = Compiles(monkeypatch)
    assert _render(templates, out) == "hello ada\n"
    assert compiles.names == ["hello.jinja"]
    assert _render(templates, out) == "hello ada\n"
    assert compiles.names == ["hello.jinja"]  # no second compile
    assert len(_cache_files(out)) == 1
    assert (out / CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"


def test_the_key_covers_every_template_the_settings_and_jinja(
    templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = cache_key(templates, SETTINGS)
    assert cache_key(templates, dict(SETTINGS)) == key
    assert cache_key(templates, {**SETTINGS, "trim_blocks": False}) != key
    (templates / "bye.jinja").write_text("{% if name %}ciao {{ name }}{% endif %}\n")
    edited = cache_key(templates, SETTINGS)
    assert edited != key
    (templates / "new.jinja").write_text("new\n")
    assert cache_key(templates, SETTINGS) not in (key, edited)
    added = cache_key(templates, SETTINGS)
    monkeypatch.setattr(jinja2, "__version__", "0.0")
    assert cache_key(templates, SETTINGS) != added


def test_an_edited_template_gets_a_new_folder_and_the_old_one_goes(
    tmp_path: Path, templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _out(tmp_path)
    _render(templates, out)
    (old,) = _cache_files(out)
    (templates / "hello.jinja").write_text("hi {{ name }}\n")
    compiles = Compiles(monkeypatch)
    assert _render(templates, out) == "hi ada\n"
    assert compiles.names == ["hello.jinja"]
    (new,) = _cache_files(out)
    assert new.parent != old.parent and not old.parent.exists()


def test_code_of_another_source_under_the_same_key_is_not_used(
    tmp_path: Path, templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. a template edited while another run was writing the cache: Jinja's own checksum
    out = _out(tmp_path)
    key = cache_key(templates, SETTINGS)
    _render(templates, out, key=key)
    (templates / "hello.jinja").write_text("hi {{ name }}\n")
    compiles = Compiles(monkeypatch)
    assert _render(templates, out, key=key) == "hi ada\n"
    assert compiles.names == ["hello.jinja"]


def _valid_head(templates: Path, name: str) -> bytes:
    source = (templates / name).read_text()
    checksum = jinja2.BytecodeCache().get_source_checksum(source)
    return bc_magic + pickle.dumps(checksum, 2)


@pytest.mark.parametrize(
    "damage",
    ["empty", "truncated", "garbage", "bad pickle", "a pickle that runs", "not code", "bad code"],
)
def test_a_damaged_cache_file_is_a_miss_and_is_rewritten(
    tmp_path: Path, templates: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    out = _out(tmp_path)
    _render(templates, out)
    (path,) = _cache_files(out)
    good = path.read_bytes()
    head = _valid_head(templates, "hello.jinja")
    assert good.startswith(head)
    ran = tmp_path / "ran"
    path.write_bytes(
        {
            "empty": b"",
            "truncated": good[: len(good) // 2],
            "garbage": b"\x00\xff" * 40,
            "bad pickle": bc_magic + b"\x80\x02X\xff",  # Jinja's own reader raises on it
            "a pickle that runs": bc_magic + f"cos\nsystem\n(S'touch {ran}'\ntR.".encode(),
            "not code": head + marshal.dumps({"a": 1}),
            "bad code": head + b"\xff\x00\x13",
        }[damage]
    )
    compiles = Compiles(monkeypatch)
    assert _render(templates, out) == "hello ada\n"
    assert compiles.names == ["hello.jinja"]
    assert path.read_bytes() == good  # rewritten whole
    assert not ran.exists()  # the header is compared as bytes: nothing is unpickled


def test_nothing_is_written_without_an_output_folder_and_a_failed_write_is_no_error(
    tmp_path: Path, templates: Path
) -> None:
    out = tmp_path / "generated"
    assert _render(templates, out) == "hello ada\n"
    assert not out.exists()  # the cache never creates generated/
    out.mkdir()
    (out / CACHE_DIR).mkdir()
    (out / CACHE_DIR / TEMPLATES_FOLDER).write_text("a file where the folder goes")
    assert _render(templates, out) == "hello ada\n"
    assert _cache_files(out) == []


def test_generated_files_are_the_same_bytes_with_the_compiled_code_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(tmp_path, "alpha")
    env = load_env(Layout.at(tmp_path), "alpha")
    plain = render.render_env(env)
    out = _out(tmp_path)
    render._environment.cache_clear()  # a fresh environment each time, as each run has
    assert render.render_env(env, generated=out) == plain  # compiled, then stored
    compiles = Compiles(monkeypatch)
    render._environment.cache_clear()
    assert render.render_env(env, generated=out) == plain  # loaded
    assert compiles.names == [] and _cache_files(out)

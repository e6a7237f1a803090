"""Code-generation speed: envgen against datamodel-code-generator itself.

For 1, 10 and 100 synthetic envs (see synthetic.py), in one run: cold `envgen generate`
(fresh tree, no cache), regeneration after one env changed (five edits, each a cache miss),
a no-op `envgen check`, and two rivals:

- datamodel-code-generator's own single call on the changed env's bundled schema (its three
  role schemas and what they reference in one document, as envgen hands it over): a fresh
  interpreter that imports `datamodel_code_generator`, calls `generate(...)` once with the
  options envgen passes (pydantic v2 `BaseModel` output, no formatters: see
  `generator/codegen/datamodel.py`) and writes the module. Each edit is timed with envgen
  and with the rival in turn (the order alternating), and the ratio is taken per edit;
- the loop a user would otherwise script: the `datamodel-codegen` command once per schema
  file (beyond 10 envs, timed on the first 10 envs' files and scaled to all of them: every
  synthetic env is the same size, and timing 300 commands would take six minutes).

Every figure is the wall time of a fresh process, as a user runs it: envgen's and the
runtime's modules are compiled to bytecode first, as installing their wheels does (and as
pip did for the rival's package), so no timed run compiles envgen's own source (an editable
install has no bytecode, and the timed processes write none). Targets at the largest
size: one env regenerated <= 1.3x datamodel-code-generator's single call; cold generate
>= 20x faster than the loop; cold generate <= 10 s and a no-op check <= 1 s on 2 cores.

    python -m benchmarks.bench_codegen [--quick | --sizes N [N ...]] [--out results.json]
    python benchmarks/bench_codegen.py [--quick | --sizes N [N ...]] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/bench_codegen.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import MachineState
from benchmarks.synthetic import touch_env, write_envs

BIN = Path(sys.executable).parent
CHANGED_RUNS = 5
"""Regenerations after one env changed, each a fresh edit; the median is reported."""
BASELINE_SAMPLE = 10
"""Envs whose files the datamodel-codegen loop is timed on; more envs scale that figure."""
TARGETS = {
    "cold_100_s": 10.0,
    "changed_one_vs_datamodel_max": 1.3,
    "noop_check_100_s": 1.0,
    "speedup_100": 20.0,
}
ROOT_NAME = "EnvgenBundleRoot"
"""The bundle's root class name, as envgen names it (the rival's output keeps it)."""
RIVAL_SCRIPT = """\
import json, sys
from datamodel_code_generator import generate
from datamodel_code_generator.enums import DataModelType, InputFileType
from datamodel_code_generator.format import PythonVersion
from datamodel_code_generator.parser import LiteralType
with open(sys.argv[1], encoding="utf-8") as handle:
    document = json.load(handle)
source = generate(
    document,
    input_file_type=InputFileType.JsonSchema,
    input_filename="bundle.json",
    class_name=sys.argv[3],
    target_python_version=PythonVersion.PY_311,
    disable_timestamp=True,
    custom_file_header="# generated",
    formatters=[],
    use_annotated=True,
    field_constraints=True,
    use_standard_collections=True,
    use_union_operator=True,
    use_type_alias=True,
    collapse_root_models=True,
    enum_field_as_literal=LiteralType.All,
    use_field_description=True,
    use_schema_description=True,
    use_double_quotes=True,
    strict_nullable=True,
    output_model_type=DataModelType.PydanticV2BaseModel,
    base_class="envgen_runtime.EnvModel",
)
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    handle.write(source)
"""
"""datamodel-code-generator's single call, with the keyword arguments envgen passes it in
`generator/codegen/datamodel.py` (a test keeps the two lists the same)."""


def compile_bytecode() -> list[Path]:
    """Compile envgen's and the runtime's packages to bytecode where they are installed (an
    editable install: their source folders); returns those folders."""
    import compileall

    import envgen_runtime

    import generator

    folders = [Path(str(package.__file__)).parent for package in (generator, envgen_runtime)]
    for folder in folders:
        if not compileall.compile_dir(folder, quiet=1):
            raise SystemExit(f"compiling {folder} to bytecode failed")
    return folders


def _timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def _envgen(root: Path, *args: str) -> float:
    return _timed([sys.executable, "-m", "generator", "--root", str(root), *args], root)


def _bundle(root: Path, name: str) -> Path:
    """The env's bundled schema as envgen builds it (its loader), written for the rival."""
    from generator.schema.loader import Layout, load_env

    document = load_env(Layout.at(root), name).bundle.document(ROOT_NAME)
    path = root / "rival" / f"{name}.bundle.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _rival(root: Path, bundle: Path) -> float:
    """datamodel-code-generator's one call on ``bundle`` in a fresh interpreter."""
    out = bundle.with_suffix(".py")
    return _timed([sys.executable, "-c", RIVAL_SCRIPT, str(bundle), str(out), ROOT_NAME], root)


def changed_pairs(root: Path, names: list[str], runs: int) -> list[tuple[float, float]]:
    """``runs`` edits of one env each: (envgen generate, the rival's single call) per edit,
    the order alternating so neither always runs first after an edit."""
    pairs = []
    count = len(names)
    for run in range(runs):  # a different env each time where there are enough
        name = names[(count // 2 + run) % count]
        touch_env(root, name, field=f"added_{run}")
        bundle = _bundle(root, name)
        if run % 2 == 0:
            envgen = _envgen(root, "generate")
            rival = _rival(root, bundle)
        else:
            rival = _rival(root, bundle)
            envgen = _envgen(root, "generate")
        pairs.append((envgen, rival))
    return pairs


def _baseline(root: Path, names: list[str]) -> float:
    """The `datamodel-codegen` command once per schema file, as a shell loop would run it
    (on the first ``BASELINE_SAMPLE`` envs' files, scaled to all of ``names``)."""
    out = root / "baseline"
    out.mkdir(exist_ok=True)
    total = 0.0
    sample = names[:BASELINE_SAMPLE]
    for name in sample:
        for role in ("action", "observation", "state"):
            total += _timed(
                [
                    str(BIN / "datamodel-codegen"),
                    "--input",
                    str(root / "schemas" / name / f"{role}.schema.json"),
                    "--input-file-type",
                    "jsonschema",
                    "--output-model-type",
                    "pydantic_v2.BaseModel",
                    "--disable-timestamp",
                    "--allow-remote-refs",
                    "--output",
                    str(out / f"{name}_{role}"),  # a folder: cross-file refs need one
                ],
                root,
            )
    return total * len(names) / len(sample)


def run_size(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="envgen-bench-") as tmp:
        root = Path(tmp)
        names = write_envs(root, count)
        cold = _envgen(root, "generate")
        pairs = changed_pairs(root, names, CHANGED_RUNS)
        changed_runs = [envgen for envgen, _ in pairs]
        changed = statistics.median(changed_runs)
        rival = statistics.median(r for _, r in pairs)
        ratio = statistics.median(envgen / r for envgen, r in pairs)
        noop = _envgen(root, "check")
        full_check = _envgen(root, "check", "--no-cache")
        baseline = _baseline(root, names)
    return {
        "envs": count,
        "cold_generate_s": round(cold, 3),
        "changed_one_s": round(changed, 3),
        "changed_one_runs_s": [round(t, 3) for t in changed_runs],
        "datamodel_one_s": round(rival, 3),
        "datamodel_one_runs_s": [round(r, 3) for _, r in pairs],
        "changed_one_vs_datamodel": round(ratio, 2),
        "noop_check_s": round(noop, 3),
        "full_check_s": round(full_check, 3),
        "baseline_s": round(baseline, 3),
        "baseline_envs_timed": min(count, BASELINE_SAMPLE),
        "speedup": round(baseline / cold, 1),
    }


def _size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"an env count must be a whole number >= 1, not {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sizes_given = parser.add_mutually_exclusive_group()
    sizes_given.add_argument("--quick", action="store_true", help="1 and 10 envs only (about 80 s)")
    sizes_given.add_argument(
        "--sizes",
        type=_size,
        nargs="+",
        metavar="N",
        help="these env counts only (default: 1 10 100); the last is the headline",
    )
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1, 10] if args.quick else [1, 10, 100])
    machine = MachineState()
    compile_bytecode()
    began = time.perf_counter()
    rows = []
    header = f"{'envs':>5} {'cold':>8} {'1 changed':>10} {'dmcg 1 call':>12} {'no-op check':>12} "
    print(header + f"{'full check':>11} {'baseline':>10} {'speedup':>8}")
    for count in sizes:
        row = run_size(count)
        rows.append(row)
        print(
            f"{row['envs']:>5} {row['cold_generate_s']:>7.2f}s {row['changed_one_s']:>9.2f}s "
            f"{row['datamodel_one_s']:>11.2f}s {row['noop_check_s']:>11.2f}s "
            f"{row['full_check_s']:>10.2f}s {row['baseline_s']:>9.2f}s {row['speedup']:>7.1f}x",
            flush=True,
        )
    head = headline(rows)
    head["quick"] = sizes != [1, 10, 100]  # the full run is these three sizes
    head["elapsed_s"] = round(time.perf_counter() - began, 1)
    if args.out:
        document = {"rows": rows, "headline": head, "machine": machine.record()}
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(head))
    return 0


def headline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The largest size's figures, each target's verdict among them."""
    largest = rows[-1]
    out: dict[str, Any] = {
        "benchmark": "codegen",
        "largest_envs": largest["envs"],
        "cold_s": largest["cold_generate_s"],
        "changed_one_s": largest["changed_one_s"],
        "datamodel_one_s": largest["datamodel_one_s"],
        "changed_one_vs_datamodel": largest["changed_one_vs_datamodel"],
        "noop_check_s": largest["noop_check_s"],
        "speedup_vs_baseline": largest["speedup"],
        "targets": TARGETS,
    }
    out["met"] = {
        "cold": out["cold_s"] <= TARGETS["cold_100_s"],
        "changed_one_vs_datamodel": (
            out["changed_one_vs_datamodel"] <= TARGETS["changed_one_vs_datamodel_max"]
        ),
        "noop_check": out["noop_check_s"] <= TARGETS["noop_check_100_s"],
        "speedup": out["speedup_vs_baseline"] >= TARGETS["speedup_100"],
    }
    out["all_met"] = all(out["met"].values())
    return out


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())

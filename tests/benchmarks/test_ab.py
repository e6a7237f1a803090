"""benchmarks/ab.py: medians per side and their ratio, the report it prints, its results row."""

from __future__ import annotations

from benchmarks.ab import FIGURES, QUICK, compare, report
from benchmarks.report import ab_section


def test_compare_takes_each_sides_median_and_the_ratio_of_head_to_base() -> None:
    base = [{"cold_s": 2.0}, {"cold_s": 4.0}, {"cold_s": 3.0}]
    head = [{"cold_s": 3.3}, {"cold_s": 3.0}, {"cold_s": 9.0}]  # one outlier, median 3.3
    assert compare(base, head) == {"cold_s": {"base": 3.0, "head": 3.3, "ratio": 1.1}}


def test_report_names_the_revision_and_each_figure() -> None:
    rows = compare([{"import_ms": 200.0}], [{"import_ms": 210.0}])
    text = report("7d2cb5b", {"step": rows}, 1)
    assert text.splitlines()[0].startswith("A/B: 7d2cb5b (base)")
    assert "import_ms" in text and "x1.05" in text


def test_every_benchmark_has_a_quick_form_and_figures() -> None:
    assert set(QUICK) == set(FIGURES)


def test_results_page_shows_each_figure_its_ratio_and_the_load_it_ran_under() -> None:
    document = {
        "base": "7d2cb5b",
        "rounds": 3,
        "load_average": [9.5, 4.0],
        "step": compare([{"import_ms": 200.0}], [{"import_ms": 210.0}]),
        "codegen": compare([{"cold_s": 1.0}], [{"cold_s": 0.9}]),
    }
    lines = ab_section(document)
    assert "| step | import_ms | 200.0 | 210.0 | 1.05 |" in lines
    assert "| codegen | cold_s | 1.0 | 0.9 | 0.9 |" in lines
    assert any("load average 9.5 at the start, 4.0 at the end" in line for line in lines)

"""The benchmark's verdicts are computed from the figures, and the docs' section from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks._e2e import cpu_figures, settled
from benchmarks._parsers import FAST_PATHS, FULL_PATH, fast_path_gains
from benchmarks._report import README_BEGIN, README_END, readme_section, tables, targets


def _case(name: str, bare: float, inst: float, **extra: Any) -> dict[str, Any]:
    streamed = extra.pop("streamed", True)
    return {
        "case": name, "kind": extra.pop("kind", "sdk"), "streamed": streamed,
        "events": 1500 if streamed else 0, "samples": 8, "bare_cpu_ms": bare,
        "tooltap_cpu_ms": inst, "ratio": inst / bare, "added_cpu_ms": inst - bare,
        "added_us_per_event": (inst - bare) * 1e3 / 1500 if streamed else None,
        "bare_ttfc_ms": 10.0 if streamed else None, "tooltap_ttfc_ms": 10.5 if streamed else None,
        **extra,
    }  # fmt: skip


CASES = [
    _case("anthropic create(stream=True)", 56.0, 58.0),
    _case("openai.chat create(stream=True)", 233.0, 250.0),
    _case("openai.chat .stream() helper", 480.0, 445.0),
    _case("google generate_content", 3.0, 3.5, streamed=False, own_added_ms=0.12,
          otel_sdk_ms=0.38),
    _case("anthropic not streamed", 3.0, 3.5, streamed=False, own_added_ms=0.2, otel_sdk_ms=0.3),
    _case("long conversation, not streamed", 4.0, 4.5, streamed=False, own_added_ms=0.4,
          otel_sdk_ms=0.1),
    _case("httpx2 GET /v1/models (not LLM)", 1.0, 0.98, streamed=False, kind="non-llm"),
    _case("httpx2 streaming proxy, anthropic.messages (no SDK)", 12.0, 14.0, kind="gateway"),
]  # fmt: skip


def _verdicts() -> dict[tuple[str, str], str]:
    return {(t["case"], t["target"].split(" ")[0]): t["verdict"] for t in targets(CASES)}


def test_verdicts_follow_the_figures() -> None:
    v = _verdicts()
    assert v["anthropic create(stream=True)", "ratio"] == "met"  # 1.036
    assert v["openai.chat create(stream=True)", "ratio"] == "MISSED"  # 1.073
    assert v["openai.chat .stream() helper", "ratio"] == "inconclusive"  # below 1
    assert v["google generate_content", "≤"] == "met"  # own 0.12 ms; the SDK's comes on top
    assert v["anthropic not streamed", "≤"] == "MISSED"
    assert v["long conversation, not streamed", "≤"] == "MISSED"  # all-in 0.5 ms > 0.3
    assert v["httpx2 GET /v1/models (not LLM)", "non-LLM"] == "inconclusive"
    assert v["anthropic create(stream=True)", "TTFC"] == "met"
    # 1.33 µs/event added over httpx's own 8 µs/event: 16.7%, within a fifth
    assert v["httpx2 streaming proxy, anthropic.messages (no SDK)", "gateway:"] == "met"


def test_a_gateway_adding_more_than_its_share_per_event_misses() -> None:
    case = _case("httpx2 streaming proxy, anthropic.messages (no SDK)", 12.0, 15.0, kind="gateway")
    (check,) = [t for t in targets([case]) if t["target"].startswith("gateway")]
    assert check["verdict"] == "MISSED"  # 2 µs/event over 8: 25%
    assert check["value"] == "+2.00 µs/event over 8.00 µs/event (25.0%)"


def test_a_least_sample_is_settled_once_a_second_comes_within_three_percent() -> None:
    assert settled([150.0, 102.0, 100.0])
    assert not settled([150.0, 110.0, 100.0])  # the least seen once: lucky, or the rest slowed
    assert not settled([100.0])
    assert settled([100.0, 100.0])


def _unsettled_case(name: str, bare: list[float], inst: list[float]) -> dict[str, Any]:
    case = _case(name, min(bare), min(inst), samples=len(bare), settled=False)
    case["cpu_ms_samples"] = {"bare": bare, "tooltap": inst}
    return case


def test_an_unsettled_case_keeps_only_the_cpu_verdicts_its_second_least_samples_agree_on() -> None:
    # least samples: 1.06, MISSED; second least: 112 / 110 = 1.018, met
    flips = _unsettled_case(
        "openai.responses create(stream=True)", [100, 110, 120], [106, 112, 130]
    )
    # all the instrumented samples slowed: 188 / 114 and 203 / 165, MISSED either way
    holds = _unsettled_case("openai.chat create(stream=True)", [114, 193, 165], [245, 188, 203])
    calm = _case("anthropic create(stream=True)", 56.0, 58.0, samples=8, settled=True)
    more = _case("openai.chat .stream() helper", 233.0, 250.0, samples=11, settled=True)
    checks = targets([flips, holds, calm, more])
    by = {(t["case"], t["target"].split(" ")[0]): t for t in checks}
    flipped = by["openai.responses create(stream=True)", "ratio"]
    assert flipped["verdict"] == "inconclusive"
    assert flipped["value"] == "1.060 (+4.00 µs/event) (not settled; the second least samples: met)"
    assert by["openai.responses create(stream=True)", "TTFC"]["verdict"] == "met"  # not CPU
    held = by["openai.chat create(stream=True)", "ratio"]
    assert held["verdict"] == "MISSED" and "the second least samples agree" in held["value"]
    assert by["openai.chat .stream() helper", "ratio"]["verdict"] == "MISSED"  # settled
    text = tables({"cases": [flips, calm, more], "targets": checks})
    assert "(best of 3 to 11 interleaved rounds)" in text
    assert "these ran more: anthropic create(stream=True) (8), " in text
    assert "openai.chat .stream() helper (11)" in text
    assert "Not settled: openai.responses create(stream=True): a CPU verdict" in text
    unnoted = tables({"cases": [calm], "targets": targets([calm])})
    assert "(best of 8 interleaved rounds)" in unnoted and "ran more" not in unnoted


def test_the_figures_of_a_rank_come_from_that_rank_of_every_mode() -> None:
    samples = {
        "bare": [2.0, 1.0, 1.5],
        "tooltap": [1.4, 1.8, 1.6],
        "noop": [1.2, 1.3, 1.1],
        "OpenLLMetry": [1.9, 1.7],
    }
    least = cpu_figures(samples, None, ["OpenLLMetry"])
    assert (least["bare_cpu_ms"], least["tooltap_cpu_ms"], least["ratio"]) == (1.0, 1.4, 1.4)
    assert least["own_added_ms"] == pytest.approx(0.1) and least["added_us_per_event"] is None
    second = cpu_figures(samples, 100, ["OpenLLMetry"], rank=1)
    assert second["ratio"] == pytest.approx(1.6 / 1.5)
    assert second["own_added_ms"] == pytest.approx(1.2 - 1.5)  # noop's second least, too
    assert second["otel_sdk_ms"] == pytest.approx(1.6 - 1.2)
    assert second["added_us_per_event"] == pytest.approx((1.6 - 1.5) * 1e3 / 100)
    assert second["peers"]["OpenLLMetry"] == pytest.approx(
        {"cpu_ms": 1.9, "ratio": 1.9 / 1.5, "added_cpu_ms": 0.4, "added_us_per_event": 4.0}
    )
    one = cpu_figures({"bare": [1.0], "tooltap": [1.1]}, 10, [], rank=1)  # one sample: it
    assert one["ratio"] == pytest.approx(1.1) and one["own_added_ms"] is None


def test_memory_is_judged_flat_only_when_it_is() -> None:
    def memory(rss: float, objects: float, left: int) -> dict[str, Any]:
        return {
            "sequential": {
                "turns": 10_000,
                "rss_growth_kib_per_1000_turns_second_half": rss,
                "gc_objects_growth_per_1000_turns_second_half": objects,
                "samples": [{"open_tool_spans": left}],
            }
        }

    def verdict(**kw: Any) -> str:
        return targets([], memory(**kw))[0]["verdict"]

    assert verdict(rss=4, objects=1, left=0) == "met"
    assert verdict(rss=400, objects=1, left=0) == "MISSED"
    assert verdict(rss=4, objects=1, left=1) == "MISSED"


def test_every_case_reaches_the_table_and_the_readme_section() -> None:
    results = {
        "cases": CASES,
        "targets": targets(CASES),
        "machine": {
            "tooltap_commit": "abc1234", "date": "today", "cores": 2, "python": "3.11.7",
            "load_average_at_start": (1.0, 1.0, 1.0), "load_average_at_end": (2.0, 1.0, 1.0),
        },
    }  # fmt: skip
    section = readme_section(results)
    assert section.startswith(README_BEGIN) and section.endswith(README_END)
    text = tables(results)
    for case in CASES:
        assert f"| {case['case']} |" in section and f"| {case['case']} |" in text
    assert "| inconclusive |" in section and "| MISSED |" in section and "abc1234" in section
    assert "| target | case | measured | verdict |" in section  # each verdict's target beside it
    for check in results["targets"]:
        assert f"| {check['target']} | {check['case']} | {check['value']} |" in section


def test_the_performance_doc_holds_the_latest_run() -> None:
    """``docs/PERFORMANCE.md`` between its markers is what ``--docs`` writes from latest.json."""
    root = Path(__file__).resolve().parents[1]
    results = json.loads((root / "benchmarks/results/latest.json").read_text())
    assert readme_section(results) in (root / "docs/PERFORMANCE.md").read_text()


def _parser_row(dialect: str, decoder: str, us_per_event: float) -> dict[str, Any]:
    return {"stream": "corpus", "dialect": dialect, "decoder": decoder, "bytes": 1000,
            "events": 10, "mb_per_s": 1.0, "events_per_s": 1e6 / us_per_event,
            "us_per_event": us_per_event}  # fmt: skip


def test_the_fast_path_figure_is_computed_from_the_parser_rows() -> None:
    rows = [
        _parser_row("openai.chat", FULL_PATH, 6.0),
        _parser_row("openai.chat", FAST_PATHS, 2.0),
        _parser_row("openai.chat", "openai SSEDecoder + json", 9.0),
        _parser_row("google.genai", FULL_PATH, 5.0),  # no fast path: no figure
        _parser_row("google.genai", FAST_PATHS, 5.0),
    ]
    (gain,) = fast_path_gains(rows)
    assert gain["dialect"] == "openai.chat" and gain["speedup"] == 3.0
    assert (gain["on_us_per_event"], gain["off_us_per_event"]) == (2.0, 6.0)
    text = tables({"cases": CASES, "targets": targets(CASES), "fast_paths": [gain]})
    assert (
        "### Fast paths on and off" in text
        and "| corpus | openai.chat | 2.00 | 6.00 | 3.0 |" in text
    )


def test_the_counted_history_verdict_follows_the_growth_with_the_collector_off() -> None:
    from benchmarks._history import count_check, count_table

    def counted(added_10: float, added_200: float) -> dict[str, Any]:
        rows = [{"gc": False, "turns": t, "bare": 50e6 * t, "tooltap": 50e6 * t + a, "added": a}
                for t, a in ((10, added_10), (200, added_200))]  # fmt: skip
        return {"requests": 1, "rows": rows, "growth_gc_off": added_200 - added_10,
                "growth_gc_on": None}  # fmt: skip

    flat, linear = counted(2.4e6, 2.6e6), counted(2.4e6, 3.9e6)
    assert count_check(flat)["verdict"] == "met"
    assert count_check(linear)["verdict"] == "MISSED"
    assert "+0.20 M, collector off" in count_table(flat)
    assert "MISSED" in count_table(linear)
    assert count_check({"skipped": "valgrind not installed"})["verdict"] == "inconclusive"


def test_counted_streams_are_judged_by_the_ratio_target_beside_the_cpu_ratio() -> None:
    from benchmarks._counted import streams_checks, streams_table

    counted = {"requests": 2, "layouts": 3, "rows": [
        {"case": "anthropic create(stream=True)", "events": 1500, "bare": 350e6,
         "tooltap": 362e6, "added": 12e6, "spread": 2.6e6, "ratio": 362 / 350},
        {"case": "google generate_content_stream", "events": 3, "bare": 10e6,
         "tooltap": 11e6, "added": 1e6, "spread": 0.04e6, "ratio": 1.1},
    ]}  # fmt: skip
    verdicts = {c["case"]: c["verdict"] for c in streams_checks(counted)}
    assert verdicts == {
        "anthropic create(stream=True)": "met",
        "google generate_content_stream": "MISSED",
    }
    table = streams_table(counted, CASES)
    # the CPU ratio of the same case from this run's cases, "-" for a case it did not time
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in table.splitlines()[4:]}
    assert rows["anthropic create(stream=True)"] == [
        "1500", "350.0", "362.0", "+12.00", "2.60", "+8.0", "1.034", "1.036", "met |"
    ]  # fmt: skip
    assert rows["google generate_content_stream"] == [
        "3", "10.0", "11.0", "+1.00", "0.04", "+333.3", "1.100", "-", "MISSED |"
    ]  # fmt: skip
    assert "the mean of 3 processes a mode" in table
    # figures of a run that counted one process a mode: no spread, and the footnote says so
    row = {k: v for k, v in counted["rows"][0].items() if k != "spread"}
    older = streams_table({"requests": 4, "rows": [row]}, CASES)
    assert older.splitlines()[4].split(" | ")[5] == "-"
    assert "one process a mode, hash seed 0" in older
    skipped = streams_checks({"skipped": "valgrind not installed"})
    assert [c["verdict"] for c in skipped] == ["inconclusive"]


def test_a_counted_row_is_the_mean_of_its_layouts_with_the_spread_of_what_was_added() -> None:
    from benchmarks._counted import stream_row

    row = stream_row("anthropic async stream", 1513, [250e6, 252e6, 254e6], [265e6, 268e6, 266e6])
    assert row["bare"] == pytest.approx(252e6)
    assert row["tooltap"] == pytest.approx(799e6 / 3)
    assert row["added"] == pytest.approx(799e6 / 3 - 252e6)
    assert row["spread"] == pytest.approx(16e6 - 12e6)  # added 15, 16 and 12 M
    assert row["ratio"] == pytest.approx(799 / 3 / 252)


def test_counted_non_llm_cases_are_judged_by_the_non_llm_target() -> None:
    from benchmarks._counted import plain_checks, plain_table

    counted = {"requests": 32, "rows": [
        {"case": "httpx2 POST /v1/search (not LLM)", "bare": 1.50e6, "tooltap": 1.52e6,
         "added": 0.02e6, "ratio": 1.52 / 1.50},
        {"case": "httpx2 GET /v1/models (not LLM)", "bare": 1.40e6, "tooltap": 1.45e6,
         "added": 0.05e6, "ratio": 1.45 / 1.40},
    ]}  # fmt: skip
    checks = plain_checks(counted)
    assert {c["case"]: c["verdict"] for c in checks} == {
        "httpx2 POST /v1/search (not LLM)": "met",
        "httpx2 GET /v1/models (not LLM)": "MISSED",  # 1.036: past 1.02, within 1.05
    }
    assert checks[0]["value"] == "1.013 (+20.0 k per request)"
    cpu = [{"case": "httpx2 POST /v1/search (not LLM)", "ratio": 1.083}]
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:]
            for line in plain_table(counted, cpu).splitlines()[4:6]}  # fmt: skip
    assert rows["httpx2 POST /v1/search (not LLM)"] == [
        "1500", "1520", "+20.0", "1.013", "1.083", "met |"
    ]  # fmt: skip
    assert rows["httpx2 GET /v1/models (not LLM)"][-2:] == ["-", "MISSED |"]
    skipped = plain_checks({"skipped": "valgrind not installed"})
    assert [c["verdict"] for c in skipped] == ["inconclusive"]


def test_peak_memory_beyond_its_allowance_misses() -> None:
    grown = _case("anthropic create(stream=True)", 56.0, 58.0, bare_peak_kib=171.0,
                  tooltap_peak_kib=358.0)  # fmt: skip
    within = _case("openai.chat not streamed", 1.0, 1.2, streamed=False, bare_peak_kib=98.0,
                   tooltap_peak_kib=111.0)  # fmt: skip
    verdicts = {t["case"]: t["verdict"] for t in targets([grown, within])
                if t["target"].startswith("peak memory")}  # fmt: skip
    assert verdicts == {
        "anthropic create(stream=True)": "MISSED",  # +187 KiB over 171: more than 64 KiB
        "openai.chat not streamed": "met",
    }


def test_a_history_count_below_bare_is_inconclusive() -> None:
    from benchmarks._history import count_check

    def counted(added_10: float, added_200: float) -> dict[str, Any]:
        rows = [{"gc": False, "turns": t, "bare": 1e8, "tooltap": 1e8 + a, "added": a}
                for t, a in ((10, added_10), (200, added_200))]  # fmt: skip
        return {"requests": 1, "rows": rows, "growth_gc_off": added_200 - added_10,
                "growth_gc_on": None}  # fmt: skip

    assert count_check(counted(-2.8e6, -0.1e6))["verdict"] == "inconclusive"
    assert count_check(counted(1.0e6, 1.2e6))["verdict"] == "met"
    assert count_check(counted(1.0e6, 2.0e6))["verdict"] == "MISSED"


def test_a_history_growth_within_the_layouts_spread_of_the_target_is_inconclusive() -> None:
    from benchmarks._counted import layout_means
    from benchmarks._history import count_check, count_table

    def counted(at_10: list[float], at_200: list[float]) -> dict[str, Any]:
        """Counts whose bare figure is the same in each layout: ``at_*`` is what was added."""
        rows = [{"gc": False, "turns": t, **layout_means([1e8] * len(a), [1e8 + x for x in a])}
                for t, a in ((10, at_10), (200, at_200))]  # fmt: skip
        growth = rows[1]["added"] - rows[0]["added"]
        return {"requests": 2, "layouts": len(at_10), "rows": rows, "growth_gc_off": growth,
                "growth_gc_on": None}  # fmt: skip

    # grows by 0.6 M on the means, but one layout's count moved 1.0 M: within reach of 0.5 M
    noisy = counted([1.0e6, 2.0e6, 1.5e6], [2.1e6, 2.1e6, 2.1e6])
    assert noisy["rows"][0]["spread"] == 1.0e6
    assert count_check(noisy)["verdict"] == "inconclusive"
    assert "+0.60 M ± 1.00 M, collector off" in count_check(noisy)["value"]
    # the same means with layouts that agree: the growth is told apart from the target
    steady = counted([1.5e6, 1.5e6, 1.5e6], [2.1e6, 2.1e6, 2.1e6])
    assert count_check(steady)["verdict"] == "MISSED"
    assert count_check(counted([1.5e6] * 3, [1.6e6, 1.7e6, 1.5e6]))["verdict"] == "met"
    table = count_table(noisy)
    assert "| off | 10 | 100.0 | 101.5 | +1.50 | 1.00 |" in table
    assert "the mean of 3 processes a mode" in table
    # figures of a run that counted one process a mode (no spread) render and say so
    old = {"requests": 2, "rows": [{k: v for k, v in r.items() if k != "spread"}
                                   for r in steady["rows"]],
           "growth_gc_off": 0.6e6, "growth_gc_on": None}  # fmt: skip
    assert "| off | 200 | 100.0 | 102.1 | +2.10 | - |" in count_table(old)
    assert "one process a mode, hash seed 0" in count_table(old)

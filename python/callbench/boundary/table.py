"""The terminal answer: seed 004's table (timeit-style totals, as the article printed them) beside the
article's figures, then the cost per call and the share of it spent crossing the boundary."""

from __future__ import annotations

from typing import Any

from .article import ARTICLE
from .plan import article_rest


def fmt_time(us: float) -> str:
    if us < 1.0:
        return f"{us * 1000:.0f} ns"
    if us < 1000.0:
        return f"{us:.3g} µs" if us < 100 else f"{us:.0f} µs"
    if us < 1e6:
        return f"{us / 1000:.3g} ms"
    return f"{us / 1e6:.3g} s"


def estimate(cell: dict[str, Any] | None, metric: str = "wall_us_per_call") -> dict[str, float] | None:
    return (cell or {}).get("summary", {}).get(metric)


def with_interval(e: dict[str, float] | None, scale: float = 1.0) -> str:
    if not e:
        return "–"
    return f"{fmt_time(e['median'] * scale)} [{fmt_time(e['lo'] * scale)}–{fmt_time(e['hi'] * scale)}]"


def render(results: dict[str, Any], mechanisms: list[str]) -> str:
    cells = {(c["experiment"], c["server"], c.get("x")): c for c in results["cells"]}
    rows: list[tuple[str, str, float | None]] = [("noop", "no-op", None), ("setup", "setup", None)]
    rows += [("step", f"step ntimes={int(x)}", x) for x in sorted({c["x"] for c in results["cells"] if c["x"]})]
    rows += [("auth", "auth", None), ("echo", "echo (10 records)", None)]
    present = [(e, label, x) for e, label, x in rows if any((e, m, x) in cells for m in mechanisms)]
    k = results["suite"]["repetitions"]
    out = [f"Per call: median of {k} repetitions [95% interval]; the no-op row is the boundary alone."]
    header = ["operation", "calls"] + mechanisms
    lines = [header]
    for e, label, x in present:
        loops = next((cells[(e, m, x)]["params"]["calls"] for m in mechanisms if (e, m, x) in cells), "")
        lines.append([label, str(loops)] + [with_interval(estimate(cells.get((e, m, x)))) for m in mechanisms])
    out += _table(lines)

    out.append("")
    out.append("Share of each call spent crossing the boundary (no-op time / call time, medians):")
    lines = [["operation"] + mechanisms]
    for e, label, x in present:
        if e == "noop":
            continue
        row = [label]
        for m in mechanisms:
            noop, call = estimate(cells.get(("noop", m, None))), estimate(cells.get((e, m, x)))
            row.append(f"{min(1.0, noop['median'] / call['median']):.0%}" if noop and call and call["median"] else "–")
        lines.append(row)
    out += _table(lines)

    rest = article_rest(mechanisms)
    article_rows = [(key, label, x) for key, (label, x) in _article_rows().items() if ("step" in key or key == "setup")]
    if article_rows:
        out.append("")
        out.append("Seed 004's table: seconds for all the calls of a row (timeit totals), the article's beside ours:")
        lines = [
            ["row", "calls", "article rpc", f"here {rest or 'requests'}", "article pyo3", "here pyo3", "here python"]
        ]
        for key, label, x in article_rows:
            rpc, pyo3, loops = ARTICLE[key]
            e = key.split("/")[0]
            here = lambda m: cells.get((e, m, x)) if m else None  # noqa: E731, B023 - used in this iteration only
            total = lambda c: with_interval(estimate(c), c["params"]["calls"]) if c else "–"  # noqa: E731
            calls = next((h["params"]["calls"] for h in map(here, ("pyo3", rest)) if h), loops)
            lines.append(
                [
                    label,
                    str(calls),
                    f"{rpc} s",
                    total(here(rest)),
                    f"{pyo3} s",
                    total(here("pyo3")),
                    total(here("python")),
                ]
            )
        out += _table(lines)
    return "\n".join(out)


def _article_rows() -> dict[str, tuple[str, float | None]]:
    return {key: (key.replace("/", " ntimes="), float(key.split("/")[1]) if "/" in key else None) for key in ARTICLE}


def _table(lines: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for n, line in enumerate(lines):
        out.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths))))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out

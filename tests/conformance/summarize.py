#!/usr/bin/env python3
"""Summarises one conformance run from ginkgo's JSON report.

run.sh calls it after the suite. It writes OUT.json (numbers, per area, every failed and skipped
spec with the first lines of its failure) and OUT.md (the same as tables), counting only the specs
the focus selected: ginkgo reports every spec of the binary, the unfocused ones as skipped.

A spec's area is its SIG and top-level container ("[sig-node] Pods"). Skipped specs are split
into those the spec skipped itself at run time (the framework's Skip, e.g. a missing feature, with
the reason it gave), those skips.txt named (the applied skips of the run), and those that did not
run at all (the suite was interrupted or timed out before them: ginkgo reports them skipped with
no message), so an unfinished run never looks finished.
"""

import argparse
import json
import re
import sys
from collections import OrderedDict
from datetime import datetime, timezone

FAILED_STATES = {"failed", "panicked", "timedout", "interrupted", "aborted"}


def spec_name(spec):
    """The full text ginkgo matches --focus and --skip against."""
    parts = list(spec.get("ContainerHierarchyTexts") or []) + [spec.get("LeafNodeText", "")]
    return " ".join(p for p in parts if p)


def area_of(spec):
    """"[sig-node] Pods": the SIG and the top-level container text."""
    texts = spec.get("ContainerHierarchyTexts") or [""]
    return re.sub(r"\s+", " ", texts[0]).strip() or "(none)"


def first_lines(text, count=3, width=400):
    """The first non-empty lines of a failure message, shortened."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    out = " / ".join(lines[:count])
    return out if len(out) <= width else out[: width - 1] + "…"


def load_skip_list(path):
    """[(regex, reason)] from the run's applied skips: REGEX<TAB>REASON lines, '#' comments."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            regex, _, reason = line.partition("\t")
            if not reason.strip():
                sys.exit(f"summarize.py: {path}:{number}: a skip needs a reason after a tab")
            entries.append((regex, reason.strip()))
    return entries


def classify(specs, focus, skip_list):
    """Buckets of the focused specs: passed, failed, listed (skip list), skipped (at run time),
    notrun (neither run nor skipped: the suite stopped first)."""
    focus_re = re.compile(focus)
    rules = [(re.compile(r), reason) for r, reason in skip_list]
    result = {"passed": [], "failed": [], "listed": [], "skipped": [], "notrun": []}
    for spec in specs:
        if spec.get("LeafNodeType") != "It":
            continue
        name = spec_name(spec)
        if not focus_re.search(name):
            continue
        state = spec.get("State", "")
        entry = OrderedDict(
            name=name,
            area=area_of(spec),
            seconds=round((spec.get("RunTime") or 0) / 1e9, 1),
        )
        failure = spec.get("Failure") or {}
        if state == "passed":
            result["passed"].append(entry)
        elif state in FAILED_STATES:
            entry["state"] = state
            entry["message"] = first_lines(failure.get("Message"))
            location = failure.get("Location") or {}
            if location.get("FileName"):
                entry["at"] = f"{location['FileName'].split('/test/e2e/')[-1]}:{location.get('LineNumber')}"
            result["failed"].append(entry)
        elif state in ("skipped", "pending"):
            reason = next((why for rule, why in rules if rule.search(name)), None)
            if failure.get("Message"):
                # The spec skipped itself and said why (a missing feature, a provider, ...).
                entry["reason"] = first_lines(failure.get("Message"), 1)
                result["skipped"].append(entry)
            elif reason is not None:
                entry["reason"] = reason
                result["listed"].append(entry)
            else:
                entry["reason"] = "did not run (the suite was interrupted or timed out first)"
                result["notrun"].append(entry)
        else:
            entry["state"] = state
            entry["message"] = f"unexpected state {state!r}"
            result["failed"].append(entry)
    return result


def signature(message):
    """A failure message with its names, ids and numbers blanked, to group alike failures."""
    text = (message or "").split(" / ")[0]
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uid>", text)
    text = re.sub(r"\b[a-z0-9]+(?:-[a-z0-9]+)*-[0-9]+\b", "<name>", text)
    text = re.sub(r"\d+(\.\d+)?", "<n>", text)
    return text[:160]


def by_signature(failed):
    """[(signature, count, [spec names])], the largest group first."""
    groups = {}
    for entry in failed:
        groups.setdefault(signature(entry["message"]), []).append(entry["name"])
    return sorted(((sig, len(names), names) for sig, names in groups.items()),
                  key=lambda g: (-g[1], g[0]))


def by_area(result):
    """{area: {passed, failed, listed, skipped}} in name order."""
    areas = {}
    for bucket, entries in result.items():
        for entry in entries:
            counts = areas.setdefault(entry["area"], {k: 0 for k in result})
            counts[bucket] += 1
    return OrderedDict(sorted(areas.items()))


def write_markdown(path, summary):
    n = summary["numbers"]
    out = [
        "# Node conformance of sergeant: the last run",
        "",
        "Generated by `tests/conformance/run.sh` (summarize.py) from ginkgo's report; the hand-written",
        "analysis of the failures is in `failures.md`.",
        "",
        f"- when: {summary['finished']}; Kubernetes {summary['kubernetes']} e2e.test; sergeant {summary['sergeant']}",
        f"- focus: `{summary['focus']}`",
        f"- wall time: {summary['wall_seconds'] // 60} min {summary['wall_seconds'] % 60} s"
        + (f" ({summary['phases']})" if summary["phases"] else ""),
        f"- specs selected: {n['selected']}: **{n['passed']} passed, {n['failed']} failed**, "
        f"{n['listed']} skipped by the skip list, {n['skipped']} skipped by the spec itself, "
        f"{n['notrun']} did not run",
    ]
    out += ["", "## By area", "",
            "| area | passed | failed | skip list | skipped at run time | did not run |",
            "|---|---:|---:|---:|---:|---:|"]
    for area, c in summary["areas"].items():
        out.append(f"| {area} | {c['passed']} | {c['failed']} | {c['listed']} | {c['skipped']} "
                   f"| {c['notrun']} |")
    out += ["", "## Failures grouped by message", "",
            "Messages with names, ids and numbers blanked; `failures.md` groups them by cause.", "",
            "| specs | message |", "|---:|---|"]
    for sig, count, _ in by_signature(summary["failed"]):
        cell = sig.replace("|", "\\|")
        out.append(f"| {count} | {cell} |")
    out += ["", f"## Failed ({n['failed']})", ""]
    for e in sorted(summary["failed"], key=lambda e: e["name"]):
        at = f" ({e['at']})" if e.get("at") else ""
        out.append(f"- `{e['name']}` [{e['state']}, {e['seconds']} s]{at}: {e['message']}")
    out += ["", f"## Skipped by the skip list ({n['listed']})", ""]
    for e in sorted(summary["listed"], key=lambda e: e["name"]):
        out.append(f"- `{e['name']}`: {e['reason']}")
    out += ["", f"## Skipped by the spec at run time ({n['skipped']})", ""]
    for e in sorted(summary["skipped"], key=lambda e: e["name"]):
        out.append(f"- `{e['name']}`: {e['reason']}")
    if summary["notrun"]:
        out += ["", f"## Did not run ({n['notrun']})", ""]
        out += [f"- `{name}`" for name in sorted(summary["notrun"])]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", required=True, help="ginkgo's JSON report")
    ap.add_argument("--out", required=True, help="output path without extension")
    ap.add_argument("--focus", required=True)
    ap.add_argument("--skips", required=True, help="the skips run.sh applied (REGEX<TAB>REASON)")
    ap.add_argument("--wall", type=int, default=0, help="wall seconds of the whole run")
    ap.add_argument("--phases", default="")
    ap.add_argument("--sergeant", default="unknown", help="sergeant's commit")
    ap.add_argument("--kubernetes", default="", help="the release of e2e.test")
    args = ap.parse_args()

    with open(args.report, encoding="utf-8") as f:
        suites = json.load(f)
    specs = [s for suite in suites for s in (suite.get("SpecReports") or [])]
    result = classify(specs, args.focus, load_skip_list(args.skips))
    version = next((s.get("SuiteDescription") for s in suites), "")
    numbers = {k: len(v) for k, v in result.items()}
    numbers["selected"] = sum(numbers.values())
    summary = OrderedDict(
        finished=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        kubernetes=args.kubernetes,
        sergeant=args.sergeant,
        suite=version,
        focus=args.focus,
        wall_seconds=args.wall,
        phases=args.phases,
        numbers=numbers,
        areas=by_area(result),
        failed=result["failed"],
        listed=result["listed"],
        skipped=result["skipped"],
        notrun=[e["name"] for e in result["notrun"]],
        passed=[e["name"] for e in result["passed"]],
    )
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    write_markdown(args.out + ".md", summary)
    print(f"{numbers['selected']} selected: {numbers['passed']} passed, {numbers['failed']} failed, "
          f"{numbers['listed']} skip list, {numbers['skipped']} skipped at run time, "
          f"{numbers['notrun']} did not run")


if __name__ == "__main__":
    main()

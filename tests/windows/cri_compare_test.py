#!/usr/bin/env python3
"""Tests of cri_compare.py's normalisation: what it lets differ between two agents' records and
what it still reports. Run by tests/windows/cri_compare.sh before each comparison:

    python3 tests/windows/cri_compare_test.py
"""

import contextlib
import io
import json
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cri_compare  # noqa: E402  (found through the path set above)


def sandbox(uid, seen):
    """A RunPodSandbox record line of pod `web` with UID `uid`; `seen` is its config.seen
    annotation, None for none."""
    annotations = {"kubernetes.io/config.source": "file"}
    if seen is not None:
        annotations["kubernetes.io/config.seen"] = seen
    config = {"metadata": {"name": "web", "uid": uid}, "annotations": annotations}
    return {"method": "RunPodSandbox", "request": {"config": config}}


def compare(upstream, sergeant):
    """cri_compare's exit code and printed table for the two records."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, lines in (("upstream", upstream), ("sergeant", sergeant)):
            path = pathlib.Path(tmp) / f"{name}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            paths.append(str(path))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cri_compare.main(["cri_compare.py", *paths])
    return code, out.getvalue()


UPSTREAM = [sandbox("u1", "2026-12-04T18:32:58.792045000Z")]


class FirstSeenTime(unittest.TestCase):
    """kubernetes.io/config.seen: compared by presence and layout, never by value."""

    def test_two_times_in_upstreams_layout_agree(self):
        for seen in ("2027-01-31T23:59:59.000000001Z", "2027-01-31T23:59:59.123456789+01:00"):
            code, table = compare(UPSTREAM, [sandbox("u2", seen)])
            self.assertEqual(code, 0, table)
            self.assertIn("0 differences", table)

    def test_a_missing_time_is_a_difference(self):
        code, table = compare(UPSTREAM, [sandbox("u2", None)])
        self.assertEqual(code, 1, table)
        self.assertIn("| config.annotations.kubernetes.io/config.seen | <TIME> | (not sent) |", table)

    def test_a_time_in_another_layout_is_a_difference(self):
        for seen in ("2027-01-31T23:59:59.123Z", "2027-01-31 23:59:59.123456789Z", "yesterday"):
            code, table = compare(UPSTREAM, [sandbox("u2", seen)])
            self.assertEqual(code, 1, table)
            self.assertIn(f"| <TIME> | {seen} | no |", table)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Compares the CRI requests two node agents sent for the same static pods, field by field.

Usage: cri_compare.py UPSTREAM.jsonl SERGEANT.jsonl

Each file holds what a recording fake CRI server received (sergeant-fake-cri --record), one
{"method", "request"} line per RunPodSandbox, CreateContainer and PullImage request, with the
agent's run directory already written as <RUN> (tests/windows/cri_compare.sh does that).
Requests are matched by pod (RunPodSandbox), by pod and container (CreateContainer) and by
image (PullImage); the first request of each is compared. What must differ between two runs
is normalised first: pod UIDs (a static pod's UID hashes its manifest's path), the time the
agent first saw the pod (kubernetes.io/config.seen: only its format is compared), sandbox IDs, the random name of a termination-log file, the order of
mounts (matched by host path). The sandbox config a CreateContainer or PullImage carries is
left out: it is the pod's, compared in RunPodSandbox. Every remaining difference is printed as a table row; the run fails (exit 1) when a
difference is not on ALLOWED below, each entry of which says why that field may differ.
"""

import json
import re
import sys

# (method, field path regex, reason): differences that are expected, and why.
ALLOWED = [
    ("*", r"(sandbox_)?config\.labels\.sergeant\.dev/node",
     "sergeant labels its pods with the node that runs them, to find its own among others "
     "sharing a runtime; upstream has no such label"),
    ("CreateContainer", r"config\.annotations\.sergeant\.dev/container-kind",
     "sergeant's own annotation (regular, init or sidecar), read back on restart"),
    ("CreateContainer", r"config\.annotations\.sergeant\.dev/memory-request",
     "sergeant's own annotation: the memory request the container was made with, which a "
     "resize's restart decision reads (upstream keeps it in its actuated-state checkpoint)"),
    ("CreateContainer", r"config\.annotations\.io\.kubernetes\.container\.hash",
     "an opaque hash only the agent that wrote it reads (upstream: fnv-32a over Go's printing "
     "of the container struct, which no other program reproduces)"),
]


# kubernetes.io/config.seen holds when the agent first saw the pod, in upstream's
# RFC3339NanoFixed layout (nine fractional digits, then Z or the zone's offset). Its value
# differs between any two runs, so a value in that layout is written <TIME> and one in any
# other is kept as it is, to show as a difference.
SEEN = "kubernetes.io/config.seen"
SEEN_LAYOUT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}(Z|[+-]\d{2}:\d{2})")


def normalise_text(text, uids):
    """The string `text` with each pod UID written <UID>."""
    for uid in uids:
        text = text.replace(uid, "<UID>")
    return text


def normalise(value, uids, path=""):
    """`value` with what must differ between runs replaced (see the module's doc)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            if key == SEEN and isinstance(item, str) and SEEN_LAYOUT.fullmatch(item):
                out[key] = "<TIME>"
            elif key == "pod_sandbox_id":
                out[key] = "<SANDBOX>"
            else:
                out[key] = normalise(item, uids, sub)
        if path == "config" and isinstance(out.get("mounts"), list):
            # Mounts are matched by what they mount, not by their place in the list.
            out["mounts"] = {mount["host_path"]: mount for mount in out["mounts"]}
        return out
    if isinstance(value, list):
        return [normalise(item, uids, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, str):
        text = normalise_text(value, uids)
        # The termination-log file's name: random in upstream, the restart count in sergeant.
        return re.sub(r"(\\containers\\[^\\]+\\)[^\\]+$", r"\1<FILE>", text)
    return value


def key_of(method, request):
    """What identifies a request across the two agents' runs."""
    if method == "RunPodSandbox":
        return request["config"]["metadata"]["name"]
    if method == "CreateContainer":
        pod = request["sandbox_config"]["metadata"]["name"]
        return f'{pod}/{request["config"]["metadata"]["name"]}'
    if method == "PullImage":
        return request["image"]["image"]
    return json.dumps(request, sort_keys=True)


def load(path):
    """{(method, key): normalised request} of the first request of each key in `path`."""
    lines = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    uids = {
        line["request"]["config"]["metadata"]["uid"]
        for line in lines
        if line["method"] == "RunPodSandbox"
    }
    found = {}
    for line in lines:
        method, request = line["method"], line["request"]
        # The pod's sandbox config rides along with each container and pull; it is compared
        # once, in RunPodSandbox.
        key = key_of(method, request)
        if method != "RunPodSandbox":
            request = {k: v for k, v in request.items() if k != "sandbox_config"}
        found.setdefault((method, key), normalise(request, uids))
    return found


def flatten(value, path=""):
    """{field path: leaf value} of `value`; an empty dict or list is a leaf."""
    if isinstance(value, dict) and value:
        out = {}
        for key, item in value.items():
            out.update(flatten(item, f"{path}.{key}" if path else key))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, item in enumerate(value):
            out.update(flatten(item, f"{path}[{index}]"))
        return out
    return {path: value}


def allowed(method, field):
    """The reason `field` of a `method` request may differ, or None."""
    for allowed_method, pattern, reason in ALLOWED:
        if allowed_method in ("*", method) and re.fullmatch(pattern, field):
            return reason
    return None


MISSING = "(not sent)"


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    upstream, sergeant = load(argv[1]), load(argv[2])
    rows = []
    for method, key in sorted(set(upstream) | set(sergeant)):
        if (method, key) not in upstream or (method, key) not in sergeant:
            want = "sent" if (method, key) in upstream else MISSING
            got = "sent" if (method, key) in sergeant else MISSING
            rows.append((method, key, "", want, got, allowed(method, "")))
            continue
        ours = flatten(sergeant[(method, key)])
        theirs = flatten(upstream[(method, key)])
        for field in sorted(set(ours) | set(theirs)):
            want, got = theirs.get(field, MISSING), ours.get(field, MISSING)
            if want != got:
                rows.append((method, key, field, want, got, allowed(method, field)))
    shown = lambda v: v if isinstance(v, str) else json.dumps(v)
    real = [row for row in rows if row[5] is None]
    print("| request | pod/container or image | field | upstream | sergeant | allowed |")
    print("|---|---|---|---|---|---|")
    for method, key, field, want, got, reason in rows:
        mark = "no" if reason is None else "yes"
        print(f"| {method} | {key} | {field or '(request)'} | {shown(want)} | {shown(got)} | {mark} |")
    print()
    for _, pattern, reason in ALLOWED:
        print(f"allowed: {pattern}: {reason}")
    print(f"\n{len(rows)} differences, {len(real)} not allowed; "
          f"{len(upstream)} upstream requests, {len(sergeant)} sergeant requests compared")
    return 1 if real else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# The crate graph's rules, checked with `cargo tree` (tests/run.sh runs this with the lints):
#   - core (pure pod logic) and host (node file work) use no actor framework, no async runtime,
#     no API client and no higher sergeant crate;
#   - the one way tokio reaches core is k8s-cri, whose generated CRI types come with tonic's
#     client stubs (the crate has no feature to leave them out); core uses only the types,
#     so the check prunes k8s-cri and fails on any other path;
#   - probes (one network check of a container) use no actor framework, no API client and no
#     higher sergeant crate;
#   - actors never depend on the HTTP server (the server sits above them);
#   - within each crate, no two top-level modules import each other, directly or round a loop
#     (tests/layers/module_loops.py; none do, and a new loop fails the check).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

failed=0
deps_of() { cargo tree -p "$1" -e normal --prune k8s-cri --prefix none --offline 2>/dev/null | awk '{print $1}' | sort -u; }

forbid() {
	local crate=$1 pattern=$2 why=$3 found
	found=$(deps_of "$crate" | grep -E "$pattern" | tr '\n' ' ' || true)
	if [[ -n $found ]]; then
		echo "layers: $crate depends on $found($why)" >&2
		failed=1
	fi
}

pure='^(actix|actix-rt|tokio|tonic|kube|kube-client|hyper|axum|sergeant-(messages|supervisor|runtime-adapters|kube-api|actors|server))$'
forbid sergeant-core "$pure" "core is pure: no actors, runtime, client or higher sergeant crate"
forbid sergeant-host "$pure" "host does node file work only, called by actors"
forbid sergeant-probes '^(actix|actix-rt|kube|kube-client|sergeant-(messages|supervisor|runtime-adapters|kube-api|actors|server))$' \
	"probes carry out one check: no actors, API client or higher sergeant crate"
forbid sergeant-actors '^sergeant-server$' "the server sits above the actors"
forbid sergeant-kube-api '^(sergeant-actors|sergeant-server)$' "the API client sits below the actors"

python3 tests/layers/module_loops.py . actors config core host kube-api messages probes \
	runtime-adapters server supervisor . || failed=1

((failed == 0)) && echo "layers: crate graph as documented (core and host pure, server above actors)"
exit "$failed"

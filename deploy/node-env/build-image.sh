#!/usr/bin/env bash
# build-image.sh — build a reproducible linux/amd64 OCI image from plain directories,
# with no container engine: tar + gzip + sha256sum for the blobs, python3 for the JSON.
#
# Two forms:
#
#   build-image.sh layer ROOTFS_DIR OUT.tar.gz
#       Make one reproducible, gzip-compressed layer from a directory (sorted entries,
#       mtime 0, owner/group 0, numeric ids, gzip without name/time). The same directory
#       content always gives the same bytes, hence the same digest, so images built on
#       top of the same layer file share that blob in the registry.
#
#   build-image.sh image --out LAYOUT_DIR --tag TAG
#                        (--rootfs DIR | --layer FILE.tar.gz)...      layers, bottom first
#                        [--entrypoint JSON_ARRAY] [--cmd JSON_ARRAY]
#                        [--env NAME=VALUE]... [--workdir DIR] [--user USER]
#                        [--push REGISTRY/NAME:TAG]
#       Write an OCI image layout (oci-layout, index.json, blobs/sha256/...) to
#       LAYOUT_DIR, tagged TAG, and with --push copy it to a plain-HTTP registry:
#         skopeo copy --dest-tls-verify=false oci:LAYOUT_DIR:TAG docker://REGISTRY/NAME:TAG
#       Prints the manifest digest on stdout.
#
# Example:
#   build-image.sh layer ./rootfs base.tar.gz
#   build-image.sh image --out /tmp/img --tag 1.0 --layer base.tar.gz \
#       --cmd '["/bin/sh"]' --env PATH=/bin --push 127.0.0.1:5000/demo/shell:1.0
set -euo pipefail

readonly LAYER_MEDIA_TYPE="application/vnd.oci.image.layer.v1.tar+gzip"

die() {
	echo "build-image.sh: error: $*" >&2
	exit 1
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

require_tools() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || die "required tool '$tool' is not installed"
	done
}

# sha256 of a file, hex only.
sha256_of() {
	local sum
	sum=$(sha256sum "$1") || die "sha256sum failed on $1"
	echo "${sum%% *}"
}

# Write the reproducible (uncompressed) tar of directory $1 to file $2.
tar_directory() {
	local rootfs=$1 out=$2 list
	[[ -d $rootfs ]] || die "layer root '$rootfs' is not a directory"
	list=$(mktemp)
	(cd "$rootfs" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) >"$list" ||
		{ rm -f "$list"; die "cannot list files of '$rootfs'"; }
	if ! tar --create --file="$out" --directory="$rootfs" \
		--no-recursion --verbatim-files-from --files-from="$list" \
		--format=gnu --mtime=@0 --owner=0 --group=0 --numeric-owner; then
		rm -f "$list"
		die "tar of '$rootfs' failed"
	fi
	rm -f "$list"
}

# build-image.sh layer ROOTFS OUT.tar.gz
make_layer() {
	local rootfs=$1 out=$2 tmp
	tmp=$(mktemp "${out}.XXXXXX")
	tar_directory "$rootfs" "$tmp"
	gzip -n -9 -c "$tmp" >"$out.part" || { rm -f "$tmp" "$out.part"; die "gzip of layer $out failed"; }
	rm -f "$tmp"
	mv -f "$out.part" "$out"
}

# Put a layer file into the layout's blob store; print "DIGEST DIFF_ID SIZE".
add_layer_blob() {
	local layout=$1 layer=$2 digest diff_id size
	[[ -f $layer ]] || die "layer file '$layer' does not exist"
	digest=$(sha256_of "$layer")
	diff_id=$(gzip -dc "$layer" | sha256sum) || die "layer '$layer' is not a valid gzip file"
	diff_id=${diff_id%% *}
	size=$(stat -c %s "$layer")
	cp -f "$layer" "$layout/blobs/sha256/$digest"
	echo "sha256:$digest sha256:$diff_id $size"
}

# Store stdin as a blob of the layout; print "sha256:HEX SIZE".
add_json_blob() {
	local layout=$1 tmp digest size
	tmp=$(mktemp "$layout/blobs/tmp.XXXXXX")
	cat >"$tmp"
	digest=$(sha256_of "$tmp")
	size=$(stat -c %s "$tmp")
	mv -f "$tmp" "$layout/blobs/sha256/$digest"
	echo "sha256:$digest $size"
}

# Image config JSON on stdout. Args: entrypoint cmd workdir user env_json layer_lines
image_config_json() {
	python3 - "$@" <<'PY'
import json, sys
entrypoint, cmd, workdir, user, env, diff_ids = sys.argv[1:7]
config = {}
if entrypoint:
    config["Entrypoint"] = json.loads(entrypoint)
if cmd:
    config["Cmd"] = json.loads(cmd)
config["Env"] = json.loads(env)
config["WorkingDir"] = workdir or "/"
if user:
    config["User"] = user
for key in ("Entrypoint", "Cmd"):
    value = config.get(key)
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        sys.exit("build-image.sh: error: %s must be a JSON array of strings" % key)
ids = diff_ids.split()
doc = {
    "created": "1970-01-01T00:00:00Z",
    "architecture": "amd64",
    "os": "linux",
    "config": config,
    "rootfs": {"type": "layers", "diff_ids": ids},
    "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "sergeant build-image.sh"} for _ in ids],
}
sys.stdout.write(json.dumps(doc, sort_keys=True, separators=(",", ":")))
PY
}

# Manifest JSON on stdout. Args: config_digest config_size "digest size"...
image_manifest_json() {
	python3 - "$LAYER_MEDIA_TYPE" "$@" <<'PY'
import json, sys
layer_type, config_digest, config_size = sys.argv[1:4]
layers = []
for entry in sys.argv[4:]:
    digest, size = entry.split()
    layers.append({"mediaType": layer_type, "digest": digest, "size": int(size)})
doc = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": config_digest, "size": int(config_size)},
    "layers": layers,
}
sys.stdout.write(json.dumps(doc, sort_keys=True, separators=(",", ":")))
PY
}

# index.json + oci-layout of the layout. Args: layout manifest_digest manifest_size tag
write_layout_index() {
	python3 - "$@" <<'PY'
import json, os, sys
layout, digest, size, tag = sys.argv[1:5]
index = {
    "schemaVersion": 2,
    "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": digest,
        "size": int(size),
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"org.opencontainers.image.ref.name": tag},
    }],
}
with open(os.path.join(layout, "index.json"), "w") as f:
    json.dump(index, f, sort_keys=True, separators=(",", ":"))
with open(os.path.join(layout, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
PY
}

push_layout() {
	local layout=$1 tag=$2 ref=$3
	skopeo copy --quiet --insecure-policy --dest-tls-verify=false \
		"oci:$layout:$tag" "docker://$ref" >&2 ||
		die "skopeo copy of oci:$layout:$tag to docker://$ref failed (is the registry up?)"
}

# build-image.sh image ...
build_image() {
	local out="" tag="" entrypoint="" cmd="" workdir="" user="" push=""
	local -a layer_specs=() envs=()
	while (($#)); do
		case $1 in
		--out) out=${2:?--out needs a directory}; shift 2 ;;
		--tag) tag=${2:?--tag needs a value}; shift 2 ;;
		--rootfs) layer_specs+=("dir:${2:?--rootfs needs a directory}"); shift 2 ;;
		--layer) layer_specs+=("file:${2:?--layer needs a file}"); shift 2 ;;
		--entrypoint) entrypoint=${2?--entrypoint needs a JSON array}; shift 2 ;;
		--cmd) cmd=${2?--cmd needs a JSON array}; shift 2 ;;
		--env) envs+=("${2:?--env needs NAME=VALUE}"); shift 2 ;;
		--workdir) workdir=${2:?--workdir needs a path}; shift 2 ;;
		--user) user=${2:?--user needs a value}; shift 2 ;;
		--push) push=${2:?--push needs REGISTRY/NAME:TAG}; shift 2 ;;
		-h | --help) usage ;;
		*) die "unknown option '$1' (see --help)" ;;
		esac
	done
	[[ -n $out ]] || die "--out is required"
	[[ -n $tag ]] || die "--tag is required"
	((${#layer_specs[@]})) || die "at least one --rootfs or --layer is required"

	rm -rf "$out"
	mkdir -p "$out/blobs/sha256"

	local spec layer_file tmp_layers diff_ids="" line digest diff_id size
	local -a layer_entries=()
	tmp_layers=$(mktemp -d)
	for spec in "${layer_specs[@]}"; do
		if [[ $spec == dir:* ]]; then
			layer_file="$tmp_layers/${#layer_entries[@]}.tar.gz"
			make_layer "${spec#dir:}" "$layer_file"
		else
			layer_file=${spec#file:}
		fi
		line=$(add_layer_blob "$out" "$layer_file")
		read -r digest diff_id size <<<"$line"
		layer_entries+=("$digest $size")
		diff_ids+="$diff_id "
	done
	rm -rf "$tmp_layers"

	local env_json config_line config_digest config_size manifest_line manifest_digest manifest_size
	env_json=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${envs[@]}")
	config_line=$(image_config_json "$entrypoint" "$cmd" "$workdir" "$user" "$env_json" "$diff_ids" |
		add_json_blob "$out") || die "cannot write the image config of $out"
	read -r config_digest config_size <<<"$config_line"
	manifest_line=$(image_manifest_json "$config_digest" "$config_size" "${layer_entries[@]}" |
		add_json_blob "$out") || die "cannot write the image manifest of $out"
	read -r manifest_digest manifest_size <<<"$manifest_line"
	write_layout_index "$out" "$manifest_digest" "$manifest_size" "$tag" ||
		die "cannot write index.json of $out"

	if [[ -n $push ]]; then
		push_layout "$out" "$tag" "$push"
	fi
	echo "$manifest_digest"
}

main() {
	require_tools tar gzip sha256sum python3 find stat
	case ${1:-} in
	layer)
		(($# == 3)) || die "usage: build-image.sh layer ROOTFS_DIR OUT.tar.gz"
		make_layer "$2" "$3"
		;;
	image)
		shift
		build_image "$@"
		;;
	-h | --help | "") usage ;;
	*) die "unknown command '$1' (expected 'layer' or 'image')" ;;
	esac
}

main "$@"

#!/usr/bin/env bash
# images.sh — builds, from scratch, the images the [NodeConformance] specs of the pinned release
# pull (test/utils/image/manifest.go names them), pushes them to a registry of their own and
# writes the KUBE_TEST_REPO_LIST file that points the suite at it.
#
# Usage (as root):
#   images.sh [up] [--force]   start the registry, build and push what is missing or stale,
#                              print KEY=VALUE lines (below)
#   images.sh down             stop the registry (its storage stays in the cache)
#   images.sh list             the image references, one a line
#
# The registry is Debian's docker-registry on $CONFORMANCE_REGISTRY (default 127.0.0.1:5100,
# plain HTTP), never 127.0.0.1:5000: the suite's image-pull specs run their own fake registry on
# host port 5000. Its storage lives in the cache ($CONFORMANCE_CACHE_DIR/<version>/registry),
# its config, pid and log under $CONFORMANCE_RUN_DIR/registry (default /run/sergeant-conformance).
# A stamp in the storage (a hash of every input) makes a second `up` a no-op.
#
# What each image holds, and where it differs from upstream's, is in README.md ("Images"). All
# are linux/amd64 OCI images made by deploy/node-env/build-image.sh; the shared parts are one
# layer each, so the registry stores them once:
#   busybox layer    busybox 1.37.0, upstream's release built as upstream's busybox image is
#                    (defconfig and that image's few changes, static here), one link per applet
#                    (deploy/node-env's make_busybox_rootfs); see "The busybox" below
#   tools layer      Debian's bash, curl and netcat-openbsd (UDP), with the shared libraries they
#                    link, dash as /bin/sh, and agnhost's files: TLS pair, /uploads, users, the
#                    fake registry's content (/var/registry/pause, tag "testing")
# The images whose specs call non-busybox tools through `sh -c` (agnhost, glibc-dns-testing) get
# dash as /bin/sh, as Debian (glibc-dns-testing) has it; alpine's sh, upstream agnhost's, follows
# PATH too. (Chosen when the busybox layer was Debian's busybox, whose sh runs its own applet for
# any command an applet is named after whatever PATH says; the busybox built here follows PATH.)
#   agnhost layer    agnhost of the pinned release (built by build.sh), /agnhost-2 link
#
# Prints: CONFORMANCE_REGISTRY=ADDR  KUBE_TEST_REPO_LIST=FILE  SANDBOX_IMAGE=REF
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# The node environment's rootfs builders (make_busybox_rootfs, make_pause_rootfs), its log/die,
# wait_for and pid helpers; sourcing it runs nothing.
# shellcheck source=../../deploy/node-env/node-env.sh
. "$repo/deploy/node-env/node-env.sh"
# shellcheck source=../control-plane/VERSION
# shellcheck disable=SC1091
. "$repo/tests/control-plane/VERSION"

build_image="$repo/deploy/node-env/build-image.sh"
registry=${CONFORMANCE_REGISTRY:-127.0.0.1:5100}
cache=${CONFORMANCE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sergeant/conformance}/$KUBERNETES_VERSION
storage="$cache/registry"
run_dir=${CONFORMANCE_RUN_DIR:-/run/sergeant-conformance}
reg_dir="$run_dir/registry"
repo_list="$cache/repo-list.yaml"
host_tools=(/usr/bin/bash /usr/bin/dash /usr/bin/curl /usr/bin/nc.openbsd)
host_packages=(bash dash curl netcat-openbsd docker-registry skopeo gcc libc6-dev make bzip2 hostname)

log() { echo "conformance images: $*" >&2; }

# The references the suite uses, as manifest.go builds them with the repo list below: "NAME
# REF" lines. The invalid registry is left alone (its pulls must fail) and so is the private
# one (its spec needs a credential provider plugin; see skips.txt).
image_refs() {
    cat <<EOF
pause $registry/pause:3.10.2
busybox $registry/e2e-test-images/busybox:1.37.0-2
agnhost $registry/e2e-test-images/agnhost:2.66.1
agnhost-prev $registry/e2e-test-images/agnhost:2.55
nginx $registry/e2e-test-images/nginx:1.27.0-2
nginx-new $registry/e2e-test-images/nginx:1.28.0-2
nonewprivs $registry/e2e-test-images/nonewprivs:1.4
nonroot $registry/e2e-test-images/nonroot:1.5
kitten $registry/e2e-test-images/kitten:1.8
glibc-dns-testing $registry/e2e-test-images/glibc-dns-testing:2.1.1
EOF
}

ref_of() { image_refs | awk -v n="$1" '$1 == n { print $2 }'; }

write_repo_list() {
    local tmp
    tmp=$(mktemp "$repo_list.XXXXXX")
    cat >"$tmp" <<EOF
# KUBE_TEST_REPO_LIST of tests/conformance: every registry of manifest.go at the local one.
promoterE2eRegistry: $registry/e2e-test-images
buildImageRegistry: $registry/build-image
gcRegistry: $registry
gcEtcdRegistry: $registry
sigStorageRegistry: $registry/sig-storage
dockerLibraryRegistry: $registry/library
cloudProviderGcpRegistry: $registry/cloud-provider-gcp
EOF
    mv "$tmp" "$repo_list"
}

# --- the registry -------------------------------------------------------------------------

reg_pid() { pid_from_file "$reg_dir/registry.pid" "$reg_dir/config.yml"; }

reg_answers() {
    curl -fsS --max-time 2 --noproxy '*' -o /dev/null "http://$registry/v2/"
}

reg_up() {
    local pid
    mkdir -p "$reg_dir" "$storage"
    if pid=$(reg_pid); then
        wait_for 30 "$pid" "the registry (pid $pid) on $registry" reg_answers || die "the registry (pid $pid) died; see $reg_dir/registry.log"
        return 0
    fi
    if (exec 3<>"/dev/tcp/${registry%:*}/${registry#*:}") 2>/dev/null; then
        die "$registry is taken by a process this script did not start (ss -ltnp 'sport = :${registry#*:}'); set CONFORMANCE_REGISTRY"
    fi
    cat >"$reg_dir/config.yml" <<EOF
# Generated by tests/conformance/images.sh: the registry of the conformance images.
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $storage
  delete:
    enabled: true
http:
  addr: $registry
EOF
    log "starting the registry on $registry (storage $storage)"
    # 8>&- 9>&-: the daemon must not inherit the locks of this script or node-env.sh.
    setsid docker-registry serve "$reg_dir/config.yml" </dev/null >>"$reg_dir/registry.log" 2>&1 8>&- 9>&- &
    pid=$!
    echo "$pid" >"$reg_dir/registry.pid"
    wait_for 60 "$pid" "the registry to answer on $registry" reg_answers ||
        die "the registry exited at start; see $reg_dir/registry.log"
}

reg_down() {
    local pid
    if pid=$(reg_pid); then
        log "stopping the registry (pid $pid)"
        stop_pid "$pid" "conformance registry"
    fi
    rm -f "$reg_dir/registry.pid"
}

# --- the busybox ---------------------------------------------------------------------------
#
# Upstream's busybox image (test/images/busybox: a mirror of the official busybox:1.37.0, glibc
# variant) is busybox.net's 1.37.0 release built with `make defconfig` and a few changes. Its ash
# imports every variable of its environment, also those whose names are no shell identifiers
# (`data-1`, as envFrom makes them), and exports them to its children: `sh -c env` prints them.
# Debian's busybox (busybox-static, 1.35 in bookworm, 1.37 in trixie) reverts that upstream change
# (its patch revert-9c143ce52da11ec3d21a3491c3749841d3dc10f0, for debian-installer), so its sh
# drops such variables; it also differs from upstream's configuration (its sh runs applets in
# preference to PATH). So the busybox of these images is built here from the release itself.
#
# The release tarball comes from Debian's archive through apt, as the .orig tarball of trixie's
# busybox source package, which is busybox.net's busybox-1.37.0.tar.bz2 byte for byte: its
# sha256 below is the one upstream's image build checks. apt runs with a state directory of its
# own (in the cache), so the host's apt configuration is left alone; the archive is the one the
# host's own apt sources use for its Debian release (debian_archive).
busybox_version=1.37.0
busybox_sha256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4
busybox_suite=trixie
busybox_dir="$cache/busybox"
busybox_tarball="$busybox_dir/busybox_$busybox_version.orig.tar.bz2"
# The directory of the built binary, bin/busybox, and its stamp.
busybox_bin="$busybox_dir/bin"

tarball_verified() { echo "$busybox_sha256  $1" | sha256sum --quiet -c - >/dev/null 2>&1; }

# debian_archive: the URI of the Debian archive the host's apt sources name for its own release
# (a one-line `deb URI CODENAME ...` entry, or a deb822 stanza whose Suites hold CODENAME), so
# the source package comes from wherever this machine gets its packages.
debian_archive() {
    local codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || die "/etc/os-release names no VERSION_CODENAME: not a Debian host?"
    local files=() file uri
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f $file ]] && files+=("$file")
    done
    ((${#files[@]})) || die "the host has no apt sources"

    uri=$(awk -v want="$codename" '
        /^[[:space:]]*#/ { next }
        $1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { if ($(i + 1) == want) { print $i; exit } break } }
        /^URIs:/ { uris = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want && uris != "") { print uris; exit } }
        /^[[:space:]]*$/ { uris = "" }
    ' "${files[@]}" 2>/dev/null)
    [[ -n $uri ]] || die "no apt source of the host names the Debian archive for $codename"
    echo "$uri"
}

# busybox_fetch: the verified release tarball at $busybox_tarball, fetched when missing.
busybox_fetch() {
    local apt_dir="$busybox_dir/apt" got
    [[ -f $busybox_tarball ]] && tarball_verified "$busybox_tarball" && return 0
    log "fetching the busybox $busybox_version source from Debian's $busybox_suite"
    rm -rf "$apt_dir"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/src"
    printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
        "$(debian_archive)" "$busybox_suite" >"$apt_dir/sources.list"
    local apt_opts=(-qq -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" update >&2 || die "apt-get update of Debian's $busybox_suite sources failed"
    (cd "$apt_dir/src" && apt-get "${apt_opts[@]}" source --download-only busybox >&2) ||
        die "apt-get source busybox ($busybox_suite) failed"
    got="$apt_dir/src/busybox_$busybox_version.orig.tar.bz2"
    [[ -f $got ]] || die "Debian's $busybox_suite busybox is no longer $busybox_version: $(ls "$apt_dir/src")"
    tarball_verified "$got" || die "$got is not busybox.net's release (sha256 differs from $busybox_sha256)"
    mv "$got" "$busybox_tarball"
    rm -rf "$apt_dir"
}

# busybox_configure: in a source tree, the configuration of upstream's image (docker-library's
# glibc variant: defconfig; ar with create and long names; no wide characters, its
# LAST_SUPPORTED_WCHAR=0; inotifyd; no fancy sync), linked statically here since the image holds
# no C library (upstream's copies glibc's libraries in). Checked after `make oldconfig`.
busybox_configure() {
    local set=(CONFIG_AR=y CONFIG_FEATURE_AR_CREATE=y CONFIG_FEATURE_AR_LONG_FILENAMES=y
        CONFIG_LAST_SUPPORTED_WCHAR=0 CONFIG_INOTIFYD=y CONFIG_STATIC=y)
    local unset=(CONFIG_FEATURE_SYNC_FANCY) conf
    make defconfig >/dev/null || die "busybox: make defconfig failed"
    for conf in "${unset[@]}"; do sed -i -e "s!^$conf=.*\$!# $conf is not set!" .config; done
    for conf in "${set[@]}"; do
        sed -i -e "s!^${conf%=*}=.*\$!$conf!" -e "s!^# ${conf%=*} is not set\$!$conf!" .config
        grep -qx "$conf" .config || echo "$conf" >>.config
    done
    # Any symbol not set above takes its default: stdin is not a terminal.
    make oldconfig </dev/null >/dev/null || die "busybox: make oldconfig failed"
    for conf in "${unset[@]}"; do ! grep -q "^$conf=" .config || die "busybox: $conf is still set"; done
    for conf in "${set[@]}"; do grep -qx "$conf" .config || die "busybox: $conf did not stick"; done
}

# busybox_build: $busybox_bin/busybox, built unless its stamp (the release, this recipe, the
# compiler) is current. A minute of two cores, once.
busybox_build() {
    local stamp build="$busybox_dir/build" t=$SECONDS
    stamp=$({
        echo "$busybox_version $busybox_sha256"
        declare -f busybox_configure
        gcc --version | head -n 1
    } | sha256sum | cut -d' ' -f1)
    if [[ -x $busybox_bin/busybox && -f $busybox_bin/busybox.stamp && $(<"$busybox_bin/busybox.stamp") == "$stamp" ]]; then
        return 0
    fi
    busybox_fetch
    log "building busybox $busybox_version"
    rm -rf "$build" "$busybox_bin"
    mkdir -p "$build" "$busybox_bin"
    tar -xjf "$busybox_tarball" -C "$build" --strip-components 1
    (
        cd "$build"
        busybox_configure
        if ! nice -n 19 make -j "$(nproc)" busybox >build.log 2>&1; then
            tail -n 30 build.log >&2
            die "building busybox failed"
        fi
    )
    install -m 0755 "$build/busybox" "$busybox_bin/busybox"
    rm -rf "$build"
    echo "$stamp" >"$busybox_bin/busybox.stamp"
    log "busybox $busybox_version built in $((SECONDS - t))s"
}

# --- rootfs builders ----------------------------------------------------------------------

# copy_with_libs ROOTFS BINARY DEST: the binary at DEST in ROOTFS, and every shared library it
# links (and the loader) at its host path.
copy_with_libs() {
    local rootfs=$1 binary=$2 dest=$3 lib
    mkdir -p "$rootfs$(dirname "$dest")"
    install -m 0755 "$binary" "$rootfs$dest"
    for lib in $(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
        [[ -e $rootfs$lib ]] && continue
        mkdir -p "$rootfs$(dirname "$lib")"
        cp -L "$lib" "$rootfs$lib"
        chmod 0755 "$rootfs$lib"
    done
}

# The accounts of upstream's busybox image (the official busybox one).
make_busybox_etc_rootfs() {
    local rootfs=$1
    mkdir -p "$rootfs/etc" "$rootfs/home" "$rootfs/var/www" "$rootfs/var/spool/mail"
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/bin/false' \
        'bin:x:2:2:bin:/bin:/bin/false' 'sys:x:3:3:sys:/dev:/bin/false' 'sync:x:4:100:sync:/bin:/bin/sync' \
        'mail:x:8:8:mail:/var/spool/mail:/bin/false' 'www-data:x:33:33:www-data:/var/www:/bin/false' \
        'operator:x:37:37:Operator:/var:/bin/false' 'nobody:x:65534:65534:nobody:/home:/bin/false' \
        >"$rootfs/etc/passwd"
    printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'bin:x:2:' 'sys:x:3:' 'adm:x:4:' 'tty:x:5:' 'disk:x:6:' \
        'wheel:x:10:root' 'mail:x:8:' 'www-data:x:33:' 'operator:x:37:' 'staff:x:50:' 'users:x:100:' \
        'nogroup:x:65534:' >"$rootfs/etc/group"
    chmod 0644 "$rootfs/etc/passwd" "$rootfs/etc/group"
}

# agnhost's base (upstream: alpine with bash, curl, netcat-openbsd, iproute2, ...): the tools the
# specs call inside agnhost containers, its accounts (user-defined-in-image 1000 in
# group-defined-in-image 50000, for the SupplementalGroups specs), the porter/netexec TLS pair at
# /localhost.{crt,key}, /uploads (netexec), /etc/os-release (image volume spec), and the fake
# registry's content.
make_tools_rootfs() {
    local rootfs=$1 pause_layout=$2 k8s=$3
    copy_with_libs "$rootfs" /usr/bin/dash /bin/sh
    copy_with_libs "$rootfs" /usr/bin/bash /bin/bash
    copy_with_libs "$rootfs" /usr/bin/curl /usr/bin/curl
    copy_with_libs "$rootfs" /usr/bin/nc.openbsd /usr/bin/nc
    mkdir -p "$rootfs/etc" "$rootfs/uploads" "$rootfs/home/user-defined-in-image"
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/:/sbin/nologin' \
        'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >"$rootfs/etc/passwd"
    printf '%s\n' 'root:x:0:root' 'nogroup:x:65533:' 'nobody:x:65534:' 'user-defined-in-image:x:1000:' \
        'group-defined-in-image:x:50000:user-defined-in-image' >"$rootfs/etc/group"
    printf '%s\n' 'NAME="sergeant conformance agnhost base"' 'ID=sergeant' \
        'PRETTY_NAME="busybox with Debian bash, curl and netcat-openbsd"' >"$rootfs/etc/os-release"
    chmod 0644 "$rootfs"/etc/{passwd,group,os-release}
    install -m 0644 "$k8s/test/images/agnhost/porter/localhost.crt" "$rootfs/localhost.crt"
    install -m 0644 "$k8s/test/images/agnhost/porter/localhost.key" "$rootfs/localhost.key"
    make_fake_registry "$rootfs/var/registry" "$pause_layout"
}

# make_fake_registry DIR PAUSE_LAYOUT: the files agnhost's fake-registry-server serves (the
# layout of fakeregistryserver/prepare_registry.sh): image "pause", tag "testing", an OCI index
# with the one linux/amd64 manifest of our pause image.
make_fake_registry() {
    local dir=$1 layout=$2
    python3 - "$dir" "$layout" <<'PY'
import hashlib, json, os, shutil, sys
out, layout = sys.argv[1:3]
image = os.path.join(out, "pause")
def path(kind, digest):
    algo, hexd = digest.split(":", 1)
    return os.path.join(image, kind, algo, hexd[:2], hexd, "data")
def put(kind, digest, data):
    p = path(kind, digest)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
def blob(digest):
    with open(os.path.join(layout, "blobs", *digest.split(":", 1)), "rb") as f:
        return f.read()
with open(os.path.join(layout, "index.json")) as f:
    desc = json.load(f)["manifests"][0]
manifest = blob(desc["digest"])
put("manifests", desc["digest"], manifest)
m = json.loads(manifest)
for d in [m["config"]] + m["layers"]:
    put("blobs", d["digest"], blob(d["digest"]))
index = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [{"mediaType": desc["mediaType"], "digest": desc["digest"], "size": desc["size"],
                   "platform": {"architecture": "amd64", "os": "linux"}}],
}, sort_keys=True, separators=(",", ":")).encode()
index_digest = "sha256:" + hashlib.sha256(index).hexdigest()
put("manifests", index_digest, index)
with open(os.path.join(image, "manifests", "testing"), "w") as f:
    f.write(index_digest + "\n")
for root, dirs, files in os.walk(out):
    for d in dirs:
        os.chmod(os.path.join(root, d), 0o755)
    for name in files:
        os.chmod(os.path.join(root, name), 0o644)
os.chmod(out, 0o755)
PY
}

make_agnhost_rootfs() {
    local rootfs=$1 bin=$2
    mkdir -p "$rootfs"
    install -m 0755 "$bin/agnhost" "$rootfs/agnhost"
    ln -s agnhost "$rootfs/agnhost-2"
}

# The default page of upstream's nginx image, where specs could read it.
make_nginx_rootfs() {
    local rootfs=$1 version=$2
    mkdir -p "$rootfs/usr/share/nginx/html"
    cat >"$rootfs/usr/share/nginx/html/index.html" <<EOF
<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>
<!-- sergeant conformance image: busybox httpd standing in for nginx $version -->
</body>
</html>
EOF
    chmod 0755 "$rootfs/usr" "$rootfs/usr/share" "$rootfs/usr/share/nginx" "$rootfs/usr/share/nginx/html"
    chmod 0644 "$rootfs/usr/share/nginx/html/index.html"
}

make_nonewprivs_rootfs() {
    local rootfs=$1 bin=$2
    mkdir -p "$rootfs/usr/local/bin"
    install -m 4755 -o 0 -g 0 "$bin/nnp" "$rootfs/usr/local/bin/nnp"
}

make_kitten_rootfs() {
    local rootfs=$1 k8s=$2
    mkdir -p "$rootfs"
    install -m 0644 "$k8s/test/images/kitten/html/kitten.jpg" "$rootfs/kitten.jpg"
    install -m 0644 "$k8s/test/images/kitten/html/data.json" "$rootfs/data.json"
}

# glibc-dns-testing (upstream: debian:bookworm-slim with dnsutils): Debian's hostname, whose -f
# resolves through glibc and /etc/hosts, on the busybox layer.
make_glibc_rootfs() {
    local rootfs=$1
    copy_with_libs "$rootfs" /usr/bin/dash /bin/sh
    copy_with_libs "$rootfs" /bin/hostname /usr/bin/hostname
    mkdir -p "$rootfs/etc"
    printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"$rootfs/etc/nsswitch.conf"
    cp /etc/os-release "$rootfs/etc/os-release"
    chmod 0644 "$rootfs/etc/nsswitch.conf" "$rootfs/etc/os-release"
}

# --- build --------------------------------------------------------------------------------

# push NAME LAYOUT_DIR BUILD_IMAGE_ARGS...
push() {
    local name=$1 work=$2 ref digest
    shift 2
    ref=$(ref_of "$name")
    digest=$("$build_image" image --out "$work/oci-$name" --tag "${ref##*:}" \
        --env "$IMAGE_PATH_ENV" "$@" --push "$ref") || die "building or pushing $ref failed"
    log "pushed $ref ($digest)"
}

inputs_hash() {
    local bin=$1 k8s=$2 busybox=$3
    {
        # Contents only: the same inputs hash alike whatever path the script was called by.
        cat "${BASH_SOURCE[0]}" "$build_image" "$repo/deploy/node-env/pause.c" \
            "$busybox/busybox" "$bin/agnhost" "$bin/nnp" "${host_tools[@]}" /bin/hostname \
            "$k8s"/test/images/agnhost/porter/localhost.* "$k8s"/test/images/kitten/html/* | sha256sum
        declare -f make_busybox_rootfs make_pause_rootfs
        image_refs
        gcc --version | head -n 1
    } | sha256sum | cut -d' ' -f1
}

all_pushed() {
    local name ref
    while read -r name ref; do
        skopeo inspect --raw --tls-verify=false "docker://$ref" >/dev/null 2>&1 || return 1
    done < <(image_refs)
}

build_all() {
    local bin=$1 k8s=$2 busybox=$3 work="$cache/images"
    rm -rf "$work"
    mkdir -p "$work"
    (
        umask 022
        make_pause_rootfs "$work/rootfs-pause"
        # make_busybox_rootfs takes the busybox that PATH finds: the one busybox_build made.
        PATH="$busybox:$PATH" make_busybox_rootfs "$work/rootfs-busybox"
        make_busybox_etc_rootfs "$work/rootfs-busybox-etc"
        make_agnhost_rootfs "$work/rootfs-agnhost" "$bin"
        make_nginx_rootfs "$work/rootfs-nginx" 1.27.0
        make_nginx_rootfs "$work/rootfs-nginx-new" 1.28.0
        make_nonewprivs_rootfs "$work/rootfs-nonewprivs" "$bin"
        make_kitten_rootfs "$work/rootfs-kitten" "$k8s"
        make_glibc_rootfs "$work/rootfs-glibc"
    )
    local layer
    for layer in busybox busybox-etc agnhost; do
        "$build_image" layer "$work/rootfs-$layer" "$work/$layer.tar.gz" || die "building the $layer layer failed"
    done
    # Upstream's pause runs as 65535:65535.
    push pause "$work" --rootfs "$work/rootfs-pause" --entrypoint '["/pause"]' --user 65535:65535
    (umask 022 && make_tools_rootfs "$work/rootfs-tools" "$work/oci-pause" "$k8s")
    "$build_image" layer "$work/rootfs-tools" "$work/tools.tar.gz" || die "building the tools layer failed"

    local base=(--layer "$work/busybox.tar.gz" --layer "$work/busybox-etc.tar.gz")
    local agnhost=(--layer "$work/busybox.tar.gz" --layer "$work/tools.tar.gz" --layer "$work/agnhost.tar.gz"
        --entrypoint '["/agnhost"]')
    push busybox "$work" "${base[@]}" --cmd '["sh"]'
    push agnhost "$work" "${agnhost[@]}" --cmd '["pause"]'
    # Another image id for the specs that change a pod's image from one agnhost to the other.
    push agnhost-prev "$work" "${agnhost[@]}" --cmd '["pause"]' --env AGNHOST_RELEASE=2.55
    push kitten "$work" "${agnhost[@]}" --rootfs "$work/rootfs-kitten" --cmd '["test-webserver"]'
    push nginx "$work" "${base[@]}" --rootfs "$work/rootfs-nginx" \
        --entrypoint '["/bin/httpd","-f","-p","80","-h","/usr/share/nginx/html"]'
    push nginx-new "$work" "${base[@]}" --rootfs "$work/rootfs-nginx-new" \
        --entrypoint '["/bin/httpd","-f","-p","80","-h","/usr/share/nginx/html"]'
    push nonewprivs "$work" "${base[@]}" --rootfs "$work/rootfs-nonewprivs" --cmd '["nnp"]'
    push nonroot "$work" "${base[@]}" --cmd '["sh"]' --user 1234
    push glibc-dns-testing "$work" "${base[@]}" --rootfs "$work/rootfs-glibc" --cmd '["sh"]'
    rm -rf "$work"
}

ensure_packages() {
    local pkg missing=()
    for pkg in "${host_packages[@]}"; do package_installed "$pkg" || missing+=("$pkg"); done
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -qq update >&2 &&
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q install "${missing[@]}" >&2 ||
        die "apt-get install ${missing[*]} failed"
}

cmd_up() {
    local force=$1 bin k8s stamp busybox
    require_root
    ensure_packages
    bin=$(bash "$here/build.sh" | sed -n 's/^CONFORMANCE_BIN=//p')
    [[ -x $bin/agnhost && -x $bin/nnp ]] || die "build.sh did not give agnhost and nnp"
    k8s="$(GOTOOLCHAIN=local go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION"
    [[ -d $k8s/test/images ]] || die "$k8s is not in the Go module cache (build.sh downloads it)"
    mkdir -p "$cache"
    exec 8>"$cache/.images.lock"
    flock 8
    reg_up
    busybox_build
    busybox=$busybox_bin
    stamp="$storage/images.stamp"
    if [[ $force == 1 || ! -f $stamp || $(<"$stamp") != "$(inputs_hash "$bin" "$k8s" "$busybox")" ]] || ! all_pushed; then
        local t=$SECONDS
        log "building the images"
        build_all "$bin" "$k8s" "$busybox"
        inputs_hash "$bin" "$k8s" "$busybox" >"$stamp"
        log "images built and pushed in $((SECONDS - t))s"
    else
        log "images up to date in $registry"
    fi
    write_repo_list
    printf '%s=%q\n' CONFORMANCE_REGISTRY "$registry" KUBE_TEST_REPO_LIST "$repo_list" \
        SANDBOX_IMAGE "$(ref_of pause)"
}

images_main() {
    local cmd=up force=0 arg
    for arg in "$@"; do
        case $arg in
        up | down | list) cmd=$arg ;;
        --force) force=1 ;;
        *) die "usage: images.sh [up [--force] | down | list]" ;;
        esac
    done
    case $cmd in
    up) cmd_up "$force" ;;
    down) reg_down ;;
    list) image_refs | awk '{ print $2 }' ;;
    esac
}

images_main "$@"

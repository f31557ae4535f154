#!/usr/bin/env bash
# Creates the PKI and kubeconfigs of the test control plane with openssl.
#
# Usage: pki.sh DIR NODE_NAME [APISERVER_PORT]
#   APISERVER_PORT defaults to $CP_APISERVER_PORT, else 6443; kubeconfigs point at
#   https://127.0.0.1:<port>.
#
# Writes into DIR (keys are 0600; everything is RSA 2048, PKCS#8 PEM):
#   ca.{crt,key}                      cluster CA (also signs the CSRs of the controller-manager)
#   apiserver.{crt,key}               serving cert: 127.0.0.1, ::1, localhost, kubernetes,
#                                     kubernetes.default, kubernetes.default.svc(.cluster.local),
#                                     10.96.0.1
#   apiserver-kubelet-client.{crt,key} the apiserver's client cert towards kubelets (system:masters)
#   admin.{crt,key}                   CN=kubernetes-admin, O=system:masters
#   controller-manager.{crt,key}      CN=system:kube-controller-manager
#   scheduler.{crt,key}               CN=system:kube-scheduler
#   node-NODE.{crt,key}               CN=system:node:NODE, O=system:nodes (client)
#   node-NODE-serving.{crt,key}       serving cert for the node's own API (127.0.0.1, localhost, NODE)
#   sa.{key,pub}                      service-account token signing key pair
#   front-proxy-ca.{crt,key}, front-proxy-client.{crt,key}   aggregation layer
#   admin.kubeconfig, controller-manager.kubeconfig, scheduler.kubeconfig,
#   node-NODE.kubeconfig, and node.kubeconfig (a copy for the NODE of this call)
#
# Idempotent: existing keys and certificates are kept (so the CA survives a second call); a
# second call with another NODE_NAME adds that node's credentials and repoints node.kubeconfig.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: pki.sh DIR NODE_NAME [APISERVER_PORT]" >&2
    exit 2
fi
dir=$1
node=$2
port=${3:-${CP_APISERVER_PORT:-6443}}
case "$node" in
    ""|*[!a-z0-9.-]*) echo "pki.sh: NODE_NAME must be a lowercase DNS name, got '$node'" >&2; exit 2 ;;
esac
days=${CP_CERT_DAYS:-3650}
server="https://127.0.0.1:$port"

umask 077
mkdir -p "$dir"
cd "$dir"

command -v openssl >/dev/null || { echo "pki.sh: openssl not found" >&2; exit 1; }

new_key() { # FILE
    [ -s "$1" ] || openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null
}

new_ca() { # NAME CN
    local name=$1 cn=$2
    new_key "$name.key"
    [ -s "$name.crt" ] && return 0
    openssl req -x509 -new -key "$name.key" -subj "/CN=$cn" -days "$days" -sha256 \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign,cRLSign" \
        -out "$name.crt"
}

# new_cert NAME CA SUBJECT USAGE [SANS]; USAGE is serverAuth, clientAuth or both.
new_cert() {
    local name=$1 ca=$2 subject=$3 usage=$4 sans=${5:-}
    new_key "$name.key"
    [ -s "$name.crt" ] && return 0
    local ext
    ext=$(mktemp)
    {
        echo "[v3]"
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        echo "subjectKeyIdentifier=hash"
        echo "authorityKeyIdentifier=keyid"
        [ -z "$sans" ] || echo "subjectAltName=$sans"
    } >"$ext"
    openssl req -new -key "$name.key" -subj "$subject" -out "$name.csr"
    openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" \
        -set_serial "0x$(openssl rand -hex 16)" -days "$days" -sha256 \
        -extfile "$ext" -extensions v3 -out "$name.crt" 2>/dev/null
    rm -f "$ext" "$name.csr"
}

# kubeconfig FILE USER CERT_NAME
kubeconfig() {
    local file=$1 user=$2 name=$3 tmp
    tmp=$(mktemp "$file.XXXXXX")
    cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sergeant-test
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <ca.crt)
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$name.crt")
    client-key-data: $(base64 -w0 <"$name.key")
contexts:
- name: $user@sergeant-test
  context:
    cluster: sergeant-test
    user: $user
current-context: $user@sergeant-test
EOF
    mv "$tmp" "$file"
}

new_ca ca sergeant-test-ca
new_ca front-proxy-ca sergeant-test-front-proxy-ca

new_cert apiserver ca "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:::1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
new_cert apiserver-kubelet-client ca "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
new_cert admin ca "/O=system:masters/CN=kubernetes-admin" clientAuth
new_cert controller-manager ca "/CN=system:kube-controller-manager" clientAuth
new_cert scheduler ca "/CN=system:kube-scheduler" clientAuth
new_cert "node-$node" ca "/O=system:nodes/CN=system:node:$node" clientAuth
new_cert "node-$node-serving" ca "/O=system:nodes/CN=system:node:$node" serverAuth \
    "IP:127.0.0.1,IP:::1,DNS:localhost,DNS:$node"
new_cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" clientAuth

new_key sa.key
[ -s sa.pub ] || openssl pkey -in sa.key -pubout -out sa.pub

kubeconfig admin.kubeconfig kubernetes-admin admin
kubeconfig controller-manager.kubeconfig system:kube-controller-manager controller-manager
kubeconfig scheduler.kubeconfig system:kube-scheduler scheduler
kubeconfig "node-$node.kubeconfig" "system:node:$node" "node-$node"
cp "node-$node.kubeconfig" node.kubeconfig
chmod 0644 ./*.crt sa.pub

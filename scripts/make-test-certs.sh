#!/usr/bin/env bash
# make-test-certs.sh DIR [CA_NAME]: a throw-away CA and a server certificate it signed, for
# localhost and 127.0.0.1, made with the openssl CLI into DIR (emptied first): ca.pem, ca.key,
# server.pem, server.key. P-256 keys; the CA is marked as one (basicConstraints, keyUsage), as
# rustls-based peers (omq.rs) require, and the server certificate is for serverAuth only.
# Valid for two days: made per run by the tls/wss tests and the harness's web section.
set -euo pipefail
dir=$1 name=${2:-oxmq test CA}
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 \
    -subj "/CN=$name" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
    -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' > ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null
rm -f server.csr ext ca.srl

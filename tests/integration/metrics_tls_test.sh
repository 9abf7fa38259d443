#!/usr/bin/env bash
# /metrics, /healthz and /readyz over TLS with basic auth, as a fleet is
# scraped from another host: a web configuration file (exporter-toolkit's
# format) with a certificate signed by a CA of the test's own and a bcrypt
# hash; a real Prometheus scrapes with the password (up 1) and without it
# (up 0); curl without credentials, with a wrong password or over plain
# HTTP is refused; `tidemark healthcheck` speaks TLS and takes its password
# from the environment; SIGHUP takes a new password; a broken web
# configuration stops validate and serve with exit 2, naming file, line and
# column.
# Usage: metrics_tls_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup metrics_tls

# A CA, and a server certificate it signed for 127.0.0.1 (EC keys: quick).
tls=$work/tls
mkdir -p "$tls"
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${newkey[@]}" -days 2 -subj "/CN=tidemark test CA" \
  -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req "${newkey[@]}" -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$tls/san.ext"
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
  -extfile "$tls/san.ext" -out "$tls/server.crt" 2>/dev/null
# A second key, which is not the certificate's.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$tls/other.key" 2>/dev/null

# bcrypt through the system's libcrypt (libxcrypt, as the daemon checks it),
# cost 10 as the docs suggest.
bcrypt() {
  python3 - "$1" <<'PY'
import ctypes, sys
lib = ctypes.CDLL("libcrypt.so.1")
lib.crypt_gensalt.restype = ctypes.c_char_p
lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
lib.crypt.restype = ctypes.c_char_p
lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
setting = lib.crypt_gensalt(b"$2b$", 10, None, 0)
print(lib.crypt(sys.argv[1].encode(), setting).decode())
PY
}
password='correct horse battery staple'
hash=$(bcrypt "$password")
check "the test's bcrypt hash is one" bash -c "[[ '$hash' =~ ^\\\$2b\\\$10\\\$[./A-Za-z0-9]{53}\$ ]]"

orders_tables 10

port=$(free_port)
mkdir -p "$work/pipelines"
write_daemon_config() {  # write_daemon_config FILE WEB_CONFIG
  cat >"$1" <<YAML
state: target
connections:
  source: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_source" }
  target: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_target" }
metrics:
  listen: "127.0.0.1:$port"
  web_config: $2
shutdown_grace: 5s
YAML
}
write_daemon_config "$work/tidemark.yaml" web.yml
# Paths in the web configuration are relative to its own folder.
cat >"$work/web.yml" <<YAML
tls_server_config:
  cert_file: tls/server.crt
  key_file: tls/server.key
  min_version: TLS12
basic_auth_users:
  prom: $hash
YAML
cat >"$work/pipelines/shop.yaml" <<'YAML'
pipeline: shop
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: orders, source_table: orders, target_table: orders, key: [id], cursor: updated_at, lookback: 1m }
YAML

check "validate accepts the web configuration" bash -c "'$tidemark' validate --config '$work/tidemark.yaml' >/dev/null"
check "validate says the endpoint is https with basic auth" bash -c \
  "'$tidemark' validate --config '$work/tidemark.yaml' | grep -q '^metrics: https://127.0.0.1:$port (web_config $work/web.yml: https, basic auth)'"

"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")

url=https://127.0.0.1:$port
# curl's status code, verifying the certificate against the test's CA.
code() {  # code PATH [CURL ARGS...]
  local path=$1
  shift
  curl -s -o /dev/null -w '%{http_code}' --cacert "$tls/ca.crt" "$@" "$url$path" || true
}
answers() {  # answers PATH CODE [CURL ARGS...]
  local path=$1 want=$2
  shift 2
  [ "$(code "$path" "$@")" = "$want" ]
}
with_password=(-u "prom:$password")

check "/healthz answers 200 over TLS with the password" eventually 20 answers /healthz 200 "${with_password[@]}"
check "/metrics answers 200 over TLS with the password" answers /metrics 200 "${with_password[@]}"
check "/metrics serves tidemark's series" bash -c \
  "curl -sf --cacert '$tls/ca.crt' -u 'prom:$password' '$url/metrics' | grep -q '^tidemark_runs_total{'"
check "/readyz answers 200 with the password" eventually 20 answers /readyz 200 "${with_password[@]}"
for path in /metrics /healthz /readyz; do
  check "$path without credentials is 401" answers "$path" 401
  check "$path with a wrong password is 401" answers "$path" 401 -u "prom:wrong"
done
check "an unknown user is 401" answers /metrics 401 -u "someone:$password"
check "a 401 asks for basic auth in realm tidemark" bash -c \
  "curl -s -D - -o /dev/null --cacert '$tls/ca.crt' '$url/metrics' | grep -qi '^www-authenticate: Basic realm=\"tidemark\"'"
check "plain HTTP gets no answer" bash -c "! curl -s -o /dev/null 'http://127.0.0.1:$port/healthz'"
check "the certificate is the one configured" bash -c \
  "openssl s_client -connect 127.0.0.1:$port </dev/null 2>/dev/null | grep -q 'subject=CN = 127.0.0.1'"
loaded() { [ "$(psql -X -At -d "${db}_target" -c 'select count(*) from orders')" = 10 ]; }
check "the table loads as usual" eventually 20 loaded

# tidemark healthcheck: TLS to its own port; the password from the environment.
status=0
"$tidemark" healthcheck --config "$work/tidemark.yaml" >/dev/null 2>"$work/healthcheck.err" || status=$?
check "healthcheck without a password exits 1" test "$status" -eq 1
check "healthcheck without a password says what to set" grep -q \
  'set TIDEMARK_HEALTHCHECK_USER and TIDEMARK_HEALTHCHECK_PASSWORD' "$work/healthcheck.err"
healthcheck() { TIDEMARK_HEALTHCHECK_USER=prom TIDEMARK_HEALTHCHECK_PASSWORD="$password" "$tidemark" healthcheck "$@" >/dev/null; }
check "healthcheck with the password exits 0" healthcheck --config "$work/tidemark.yaml"
check "healthcheck --ready with the password exits 0" healthcheck --ready --config "$work/tidemark.yaml"
status=0
TIDEMARK_HEALTHCHECK_USER=prom TIDEMARK_HEALTHCHECK_PASSWORD=wrong \
  "$tidemark" healthcheck --config "$work/tidemark.yaml" >/dev/null 2>&1 || status=$?
check "healthcheck with a wrong password exits 1" test "$status" -eq 1

# A real Prometheus: with the password over TLS the target is up, without
# it (or over plain HTTP) it is down.
prom_port=$(free_port)
while [ "$prom_port" = "$port" ]; do prom_port=$((prom_port + 1)); done
cat >"$work/prometheus.yml" <<YAML
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: with_password
    scheme: https
    tls_config: { ca_file: "$tls/ca.crt" }
    basic_auth: { username: prom, password: "$password" }
    static_configs: [{ targets: ["127.0.0.1:$port"] }]
  - job_name: without_password
    scheme: https
    tls_config: { ca_file: "$tls/ca.crt" }
    static_configs: [{ targets: ["127.0.0.1:$port"] }]
  - job_name: plain_http
    static_configs: [{ targets: ["127.0.0.1:$port"] }]
YAML
start_prometheus "$prom_port"
found() { query "$1" | jq -e '.data.result | length == 1' >/dev/null; }
check "prometheus with the password: up == 1" eventually 30 found 'up{job="with_password"} == 1'
check "prometheus with the password reads tidemark's series" eventually 15 found \
  'count(tidemark_runs_total{job="with_password"}) > 0'
check "prometheus without the password: up == 0" eventually 30 found 'up{job="without_password"} == 0'
check "prometheus over plain HTTP: up == 0" eventually 30 found 'up{job="plain_http"} == 0'
# Stays down: once it has scraped it for three seconds more, none of the
# scrapes was up.
down=$(date +%s)
check "prometheus without the password is scraped again" eventually 30 found \
  "timestamp(up{job=\"without_password\"}) > $((down + 3))"
check "prometheus without the password stays down" found 'max_over_time(up{job="without_password"}[1m]) == 0'

# SIGHUP reads the web configuration again: a new password applies.
new_password='another one'
new_hash=$(bcrypt "$new_password")
sed -i "s|prom: .*|prom: $new_hash|" "$work/web.yml"
kill -HUP "$serve"
check "after SIGHUP the new password is taken" eventually 10 answers /metrics 200 -u "prom:$new_password"
check "after SIGHUP the old password is refused" answers /metrics 401 "${with_password[@]}"
# A broken web configuration at reload keeps the one in use.
printf 'tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/other.key\n' >"$work/web.yml"
kill -HUP "$serve"
check "a reload with a key that is not the certificate's is refused" eventually 10 grep -q \
  "reload: $work/web.yml:3:13: tls_server_config.key_file: the key $work/tls/other.key is not the key of the certificate" \
  "$work/serve.log"
check "the endpoint keeps what it had" answers /metrics 200 -u "prom:$new_password"

# A web configuration that is wrong stops validate and serve with exit 2,
# naming its file, line and column.
bad_config() {  # bad_config NAME: tidemark-NAME.yaml pointing at NAME.yml
  write_daemon_config "$work/tidemark-$1.yaml" "$1.yml"
}
refused() {  # refused NAME PATTERN: validate and serve exit 2 and say PATTERN
  local status=0
  "$tidemark" validate --config "$work/tidemark-$1.yaml" >/dev/null 2>"$work/$1.validate" || status=$?
  [ "$status" -eq 2 ] || { echo "validate exited $status" >&2; return 1; }
  grep -qF -- "$2" "$work/$1.validate" || { cat "$work/$1.validate" >&2; return 1; }
  status=0
  timeout 20 "$tidemark" serve --config "$work/tidemark-$1.yaml" >"$work/$1.serve" 2>&1 || status=$?
  [ "$status" -eq 2 ] || { echo "serve exited $status" >&2; return 1; }
  grep -qF -- "$2" "$work/$1.serve" || { cat "$work/$1.serve" >&2; return 1; }
}
bad_config unknown_key
printf 'tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n  ca_file: tls/ca.crt\n' \
  >"$work/unknown_key.yml"
check "an unknown key: exit 2, file:line:column and key path" refused unknown_key \
  "$work/unknown_key.yml:4:3: tls_server_config.ca_file: unknown key \"ca_file\""
bad_config bad_hash
printf 'basic_auth_users:\n  prom: %s\n' "$password" >"$work/bad_hash.yml"
check "a password in clear: exit 2, file:line:column" refused bad_hash \
  "$work/bad_hash.yml:2:9: basic_auth_users.prom: the password hash of \"prom\" is not a bcrypt hash"
check "a password in clear is not repeated" bash -c "! grep -q 'battery' '$work/bad_hash.validate'"
bad_config missing_cert
printf 'tls_server_config:\n  cert_file: tls/nothing.crt\n  key_file: tls/server.key\n' >"$work/missing_cert.yml"
check "a missing certificate: exit 2, file:line:column" refused missing_cert \
  "$work/missing_cert.yml:2:14: tls_server_config.cert_file: cannot read $work/tls/nothing.crt (No such file or directory)"
bad_config not_pem
printf 'tls_server_config:\n  cert_file: tls/san.ext\n  key_file: tls/server.key\n' >"$work/not_pem.yml"
check "a file that is no certificate: exit 2, file:line:column" refused not_pem \
  "$work/not_pem.yml:2:14: tls_server_config.cert_file: cannot load the certificate $work/tls/san.ext ("
bad_config absent
check "a web configuration that does not exist: exit 2, where it is named" refused absent \
  "$work/tidemark-absent.yaml:7:15: metrics.web_config: the web configuration $work/absent.yml cannot read file: No such file"
bad_config syntax
printf 'tls_server_config: [\n' >"$work/syntax.yml"
check "a YAML syntax error: exit 2, file:line:column" refused syntax "$work/syntax.yml:2:1: YAML syntax error"

report

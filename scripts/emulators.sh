#!/usr/bin/env bash
# Local AWS emulation for tests and the demo, on loopback only.
#   scripts/emulators.sh install        pinned emulators, in the cache (scripts/cache.sh) and
#                                       linked from the clone: moto at .venv/, LocalStack at
#                                       .venv-localstack/ (it wants its own fork of moto), fauxqs
#                                       at .venv-fauxqs/
#   scripts/emulators.sh start | stop   moto_server (SQS, SNS, ECS, Lambda, Application Auto Scaling, STS, DynamoDB, S3, CloudFormation),
#                                       LocalStack (CloudWatch, SQS, and CloudFormation with what
#                                       the template's Lambda sets create) and fauxqs (SQS)
#   scripts/emulators.sh ensure         start, unless this checkout's are already running
#   scripts/emulators.sh run -- CMD...  start, run CMD with the SDK routed to them, stop (always);
#                                       each run has emulators of its own, so runs side by side in
#                                       one checkout (make demo beside make test) never meet
# The SDK is routed with the standard AWS_ENDPOINT_URL_<SERVICE> variables, written to
# .emulators/env for anything that wants to source them. SQS and STS are routed to moto;
# LocalStack's SQS, a second implementation, is at E2E_LOCALSTACK_SQS for the tests that run
# a scenario on both (and for make bench's replay of 10,000 records, a backlog moto's SQS
# cannot hold at speed). fauxqs, a third SQS and the fast one (thousands of messages a second
# where moto takes tens), is at E2E_FAUXQS_SQS: for the same tests, and for make bench's scale
# runs. LocalStack's CloudFormation, at E2E_LOCALSTACK_CLOUDFORMATION, deploys the template for
# tests/tests/e2e/deployed/; its DynamoDB is moto's (scripts/run_localstack.py says why).
# LOCALSTACK_SERVICES sets what LocalStack serves.
# E2E_FAUXQS_PID is its process (make bench reads its CPU beside ours).
# FAUXQS_RECEIPT_HANDLE_CHARS (380) sets fauxqs's receipt handles' length (SQS's: ~320-430).
# redis-server, Debian's package (downloaded and unpacked, at .venv-redis/, no root, no service),
# is at E2E_REDIS_URL for the idempotency store's tests.
# Emulators already installed are used instead of the pinned ones when named:
#   MOTO_SERVER=/path/to/moto_server   REDIS_SERVER=/path/to/redis-server
# (off Debian, a redis-server on PATH is used as REDIS_SERVER). The script needs nothing of the
# clone but its own scripts/ folder: a copy of the repository (git archive, a tarball) works.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
localstack_venv="$root/.venv-localstack"
localstack_services=${LOCALSTACK_SERVICES:-cloudwatch,sqs,sns,cloudformation,lambda,iam,events,s3,logs,kms,sts,dynamodb}
fauxqs_home="$root/.venv-fauxqs"
redis_home="$root/.venv-redis"
# fauxqs 2.4.1 wants Node >= 22.5; an older machine's node gets this one, from the npm registry.
node_pinned=22.23.3
state="$root/.emulators"
requirements="$root/scripts/requirements-emulators.txt"
localstack_requirements="$root/scripts/requirements-localstack.txt"
constraints="$root/scripts/constraints-emulators.txt"
python=${PYTHON:-python3}
redis_packages="redis-server redis-tools liblzf1 libjemalloc2"
# shellcheck source=scripts/cache.sh
. "$root/scripts/cache.sh"

log() { printf 'emulators: %s\n' "$*" >&2; }

make_venv() { # dir requirements
  log "installing $(basename "$2") into $1 (once a cache; a minute or two)"
  "$python" -m venv "$1"
  "$1/bin/pip" install --quiet -r "$2" -c "$constraints"
}
make_moto() { make_venv "$1" "$requirements"; }
make_localstack() { make_venv "$1" "$localstack_requirements"; }

# One install at a time per checkout: a second one (`install` beside a `make demo` that is
# installing) would find a half-made link and call a pip that does not exist yet. It waits for
# the first, then finds everything in place. The environments themselves live in the cache
# (scripts/cache.sh), keyed on the pins they are made from.
install() {
  mkdir -p "$root/.emulators"
  exec 9>"$root/.emulators/install.lock"
  if ! flock -n 9; then
    log "another install of the emulators is under way in this checkout; waiting for it to finish"
    flock 9
  fi
  local python_version
  python_version=$("$python" -VV)
  if [ -n "${MOTO_SERVER:-}" ]; then
    [ -x "$MOTO_SERVER" ] || { log "MOTO_SERVER=$MOTO_SERVER is not an executable moto_server"; return 1; }
    log "using the moto_server installed at $MOTO_SERVER"
  else
    cache_env "$venv" moto make_moto "$python_version" "$requirements" "$constraints"
  fi
  cache_env "$localstack_venv" localstack make_localstack "$python_version" "$localstack_requirements" "$constraints"
  cache_env "$fauxqs_home" fauxqs make_fauxqs "$(node --version 2>/dev/null || echo no-node)" \
    "$root/scripts/fauxqs/package.json" "$root/scripts/fauxqs/package-lock.json" "$root/scripts/fauxqs/serve.mjs"
  if [ -z "${REDIS_SERVER:-}" ] && ! command -v apt-get >/dev/null && command -v redis-server >/dev/null; then
    REDIS_SERVER=$(command -v redis-server)
  fi
  if [ -n "${REDIS_SERVER:-}" ]; then
    [ -x "$REDIS_SERVER" ] || { log "REDIS_SERVER=$REDIS_SERVER is not an executable redis-server"; return 1; }
    log "using the redis-server installed at $REDIS_SERVER"
  else
    cache_env "$redis_home" redis make_redis "$redis_packages" "$(uname -m)" "$(cat /etc/debian_version 2>/dev/null)"
  fi
  # Released now: a `run` holds it for its install only, not while its command runs.
  exec 9>&-
}

# Debian's redis-server and the two libraries it needs beyond a base system, unpacked here
# (apt-get download needs no root, and nothing is installed or started system-wide).
make_redis() { # dir
  local home=$1
  command -v apt-get >/dev/null || { log "redis-server comes from Debian's packages: apt-get is missing"; return 1; }
  log "downloading Debian's redis-server into $home (once a cache)"
  mkdir -p "$home/debs" "$home/root" "$home/bin"
  # shellcheck disable=SC2086 # a list of package names
  (cd "$home/debs" && apt-get download $redis_packages >/dev/null 2>&1) \
    || { log "apt-get download redis-server failed (is Debian's package index reachable?)"; return 1; }
  for deb in "$home"/debs/*.deb; do dpkg-deb -x "$deb" "$home/root"; done
  local lib="$home/root/usr/lib/$(uname -m)-linux-gnu"
  for tool in redis-server redis-cli; do
    # redis-server is redis-check-rdb started under the name redis-server.
    printf '#!/usr/bin/env bash\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec -a %s "%s" "$@"\n' \
      "$lib" "$tool" "$(readlink -f "$home/root/usr/bin/$tool")" >"$home/bin/$tool"
    chmod +x "$home/bin/$tool"
  done
  "$home/bin/redis-server" --version >/dev/null || { log "the unpacked redis-server does not start"; return 1; }
}

# The node that runs fauxqs: the machine's when new enough, else the pinned one.
node_for_fauxqs() {
  if [ -x "$fauxqs_home/node/node_modules/.bin/node" ]; then
    echo "$fauxqs_home/node/node_modules/.bin/node"
  else
    command -v node
  fi
}

node_new_enough() { # node
  "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 5) ? 0 : 1)'
}

make_fauxqs() { # dir
  local home=$1 spec="$root/scripts/fauxqs"
  command -v npm >/dev/null || { log "fauxqs needs Node.js and npm (the npm registry gives Node 22)"; return 1; }
  log "installing pinned fauxqs into $home (once a cache)"
  cp "$spec/package.json" "$spec/package-lock.json" "$spec/serve.mjs" "$home/"
  (cd "$home" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  if ! node_new_enough "$(command -v node)"; then
    log "the machine's node is $(node --version); installing Node $node_pinned from the npm registry"
    mkdir -p "$home/node"
    (cd "$home/node" && echo '{"private":true}' >package.json \
      && npm install --no-audit --no-fund --loglevel=error --save-exact "node@$node_pinned" >/dev/null)
  fi
}

# PING answered with PONG, over bash's own TCP: no redis-cli needed beside an installed server.
redis_answers() { # port
  local reply
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'PING\r\n' >&3
  read -r -t 1 reply <&3 || true
  exec 3>&-
  [[ "$reply" == +PONG* ]]
}

free_port() {
  "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() { # name url pattern pid
  local name=$1 url=$2 pattern=$3 pid=$4
  for _ in $(seq 1 240); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited while starting; its log:"; tail -n 40 "$state/$name.log" >&2; return 1
    fi
    if curl -fsS --max-time 2 "$url" 2>/dev/null | grep -q "$pattern"; then return 0; fi
    sleep 0.5
  done
  log "$name did not become ready at $url; its log:"; tail -n 40 "$state/$name.log" >&2; return 1
}

start() {
  install
  stop quietly
  mkdir -p "$state/localstack-volume" "$state/localstack-tmp"
  local moto_port localstack_port fauxqs_port redis_port
  moto_port=$(free_port)
  localstack_port=$(free_port)
  fauxqs_port=$(free_port)
  redis_port=$(free_port)

  log "starting moto_server (SQS, SNS, ECS, Lambda, Application Auto Scaling, STS, DynamoDB, S3, CloudFormation) on 127.0.0.1:$moto_port"
  setsid "${MOTO_SERVER:-$venv/bin/moto_server}" -H 127.0.0.1 -p "$moto_port" >"$state/moto.log" 2>&1 &
  echo $! >"$state/moto.pid"

  # LocalStack in host mode (no Docker). Its own TMPDIR: two instances sharing one
  # temporary folder break each other on shutdown.
  log "starting LocalStack ($localstack_services) on 127.0.0.1:$localstack_port"
  GATEWAY_LISTEN="127.0.0.1:$localstack_port" SERVICES="$localstack_services" \
    LOCALSTACK_VOLUME_DIR="$state/localstack-volume" TMPDIR="$state/localstack-tmp" \
    DNS_ADDRESS=0 DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 \
    LOCALSTACK_TELEMETRY_DISABLED=1 LOCALSTACK_LAMBDA_PREPARE=code DYNAMODB_LOCAL_PORT="$moto_port" \
    setsid "$localstack_venv/bin/python" "$root/scripts/run_localstack.py" >"$state/localstack.log" 2>&1 &
  echo $! >"$state/localstack.pid"

  log "starting fauxqs (SQS) on 127.0.0.1:$fauxqs_port"
  FAUXQS_RECEIPT_HANDLE_CHARS=${FAUXQS_RECEIPT_HANDLE_CHARS:-380} \
    setsid "$(node_for_fauxqs)" "$fauxqs_home/serve.mjs" "$fauxqs_port" >"$state/fauxqs.log" 2>&1 &
  echo $! >"$state/fauxqs.pid"

  log "starting redis-server on 127.0.0.1:$redis_port"
  setsid "${REDIS_SERVER:-$redis_home/bin/redis-server}" --bind 127.0.0.1 --port "$redis_port" --save "" \
    --appendonly no --dir "$state" >"$state/redis.log" 2>&1 &
  echo $! >"$state/redis.pid"

  cat >"$state/env" <<ENV
export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_ECS=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_STS=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_SNS=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_LAMBDA=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING=http://127.0.0.1:$moto_port
export AWS_ENDPOINT_URL_CLOUDWATCH=http://127.0.0.1:$localstack_port
export E2E_LOCALSTACK_SQS=http://127.0.0.1:$localstack_port
export E2E_LOCALSTACK_SNS=http://127.0.0.1:$localstack_port
export E2E_LOCALSTACK_CLOUDFORMATION=http://127.0.0.1:$localstack_port
export E2E_FAUXQS_SQS=http://127.0.0.1:$fauxqs_port
export E2E_FAUXQS_PID=$(cat "$state/fauxqs.pid")
export E2E_REDIS_URL=redis://127.0.0.1:$redis_port
export E2E_REDIS_SERVER=${REDIS_SERVER:-$redis_home/bin/redis-server}
export AWS_ACCESS_KEY_ID=testing
export AWS_SECRET_ACCESS_KEY=testing
export AWS_REGION=us-east-1
export AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
ENV

  wait_for moto "http://127.0.0.1:$moto_port/moto-api/data.json" '{' "$(cat "$state/moto.pid")"
  wait_for fauxqs "http://127.0.0.1:$fauxqs_port/health" 'ok' "$(cat "$state/fauxqs.pid")"
  for _ in $(seq 1 100); do
    redis_answers "$redis_port" && break
    kill -0 "$(cat "$state/redis.pid")" 2>/dev/null \
      || { log "redis-server exited while starting; its log:"; tail -n 20 "$state/redis.log" >&2; return 1; }
    sleep 0.1
  done
  wait_for localstack "http://127.0.0.1:$localstack_port/_localstack/health" '"cloudwatch": "\(available\|running\)"' \
    "$(cat "$state/localstack.pid")"
  # LocalStack loads a service on its first request, which can take seconds: pay that
  # here, not inside a test whose calls have a timeout of their own.
  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "$localstack_venv/bin/python" -c '
import sys, boto3
boto3.client("cloudwatch", endpoint_url=sys.argv[1], region_name="us-east-1").list_metrics()
if "sqs" in sys.argv[2].split(","):
    boto3.client("sqs", endpoint_url=sys.argv[1], region_name="us-east-1").list_queues()
if "sns" in sys.argv[2].split(","):
    boto3.client("sns", endpoint_url=sys.argv[1], region_name="us-east-1").list_topics()
if "cloudformation" in sys.argv[2].split(","):
    boto3.client("cloudformation", endpoint_url=sys.argv[1], region_name="us-east-1").list_stacks()
' "http://127.0.0.1:$localstack_port" "$localstack_services" \
    || { log "LocalStack did not answer"; return 1; }
  log "ready (endpoints in ${state#"$root"/}/env)"
}

stop() {
  local quiet=${1:-}
  for name in localstack fauxqs moto redis; do
    local pidfile="$state/$name.pid"
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      [ -n "$quiet" ] || log "stopping $name"
      # setsid made each emulator a process group: stop its children too.
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
  # Their endpoints are gone with them.
  rm -f "$state/env"
}

run() {
  [ "${1:-}" = "--" ] && shift
  # A state folder of its own: a `make demo` beside a `make test` in the same checkout
  # starts and stops its own emulators, never the other's.
  state="$root/.emulators/run-$$"
  trap 'stop; rm -rf "$state"' EXIT
  trap 'exit 130' INT TERM
  start
  # shellcheck disable=SC1091
  . "$state/env"
  "$@"
}

# Started unless this checkout's are already up (make e2e keeps them between runs).
ensure() {
  if [ -f "$state/env" ] && [ -f "$state/moto.pid" ] && kill -0 "$(cat "$state/moto.pid")" 2>/dev/null \
    && [ -f "$state/localstack.pid" ] && kill -0 "$(cat "$state/localstack.pid")" 2>/dev/null; then
    log "already running (endpoints in ${state#"$root"/}/env; make emulators-stop ends them)"
    return 0
  fi
  start
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  ensure) ensure ;;
  stop) stop ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 install|start|ensure|stop|run -- CMD..." >&2; exit 2 ;;
esac

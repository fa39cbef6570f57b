#!/usr/bin/env bash
# make bench: our functions next to the usual Python tools, on the same work, on
# this machine, in one run. Results: target/bench/*.json, the table in
# bench/results/latest.md (bench/report.py). Not part of `make test`.
#
#   bench/run.sh            everything (the publisher part inside scripts/emulators.sh run)
#   bench/run.sh init | consumer | engine | publisher | worker | replay | doctor | fifo-scan | scale | size | profile | report   one part
#
# BENCH_RUNS (3): throughput runs per variant; BENCH_WORKER_RUNS (5): the scale part's worker drains; BENCH_STARTS (10): cold starts per function;
# BENCH_INIT_ROUNDS (15): interleaved starts of each function and the floor;
# BENCH_ARM64 (1): also build arm64 with cargo-lambda when the aarch64 target is installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out="$root/target/bench"
venv="$root/.venv-bench"
runs=${BENCH_RUNS:-3}
starts=${BENCH_STARTS:-10}
harness="$root/target/debug"
release="$root/target/release"

log() { printf '\nbench: %s\n' "$*" >&2; }

install_tools() {
  local missing=()
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  command -v wrk >/dev/null || missing+=(wrk)
  command -v perf >/dev/null || missing+=(linux-perf)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]} from Debian"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # The package starts a system nginx on port 80; the benchmark runs its own.
    $sudo service nginx stop >/dev/null 2>&1 || true
  fi
  if [ ! -x "$venv/bin/python" ]; then
    log "creating $venv"
    python3 -m venv "$venv"
  fi
  local stamp="$venv/.installed"
  if ! cat bench/requirements.txt bench/constraints.txt | cmp -s - "$stamp"; then
    log "installing the Python anchors (Powertools, awslambdaric, requests, aiohttp, boto3)"
    "$venv/bin/pip" install --quiet -r bench/requirements.txt -c bench/constraints.txt
    cat bench/requirements.txt bench/constraints.txt >"$stamp"
  fi
}

build() {
  log "building the functions (release) and the harness"
  cargo build --release -p backlog-publisher -p batch-consumer -p sqs-worker -p lambda-floor
  cargo build -p sqs-backpressure-bench --bins
  cargo build --release -p sqs-backpressure-bench --bin bench-sdk-call
}

nginx_dir=""
start_downstream() {
  nginx_dir=$(mktemp -d)
  local port
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sed -e "s#PREFIX#$nginx_dir#g" -e "s#PORT#$port#g" bench/nginx.conf >"$nginx_dir/nginx.conf"
  local nginx
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  "$nginx" -p "$nginx_dir" -c "$nginx_dir/nginx.conf"
  trap stop_downstream EXIT
  downstream="http://127.0.0.1:$port/work"
  curl -fsS -o /dev/null -X POST --data '{}' "$downstream"
  log "nginx answering 204 at $downstream"
}

stop_downstream() {
  if [ -n "$nginx_dir" ] && [ -f "$nginx_dir/nginx.pid" ]; then
    kill "$(cat "$nginx_dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  fi
  nginx_dir=""
}

# Init against the floor: a bare lambda_runtime hello world (bench/floor, same release profile),
# backlog-publisher and batch-consumer started in turn, BENCH_INIT_ROUNDS rounds; ratios of medians.
init() {
  cargo build --release -p backlog-publisher -p batch-consumer -p lambda-floor
  cargo build -p sqs-backpressure-bench --bin bench-init
  log "init against a bare lambda_runtime function (${BENCH_INIT_ROUNDS:-15} interleaved rounds)"
  "$harness/bench-init" --rounds "${BENCH_INIT_ROUNDS:-15}" --out "$out/init.json" \
    --floor "$release/lambda-floor" --publisher "$release/backlog-publisher" --consumer "$release/batch-consumer"
}

# $1: where the best shape goes (the consumer's target is judged against ceiling.json).
ceiling() {
  log "the downstream's own ceiling (wrk, same requests)"
  # wrk's own CPU per request too (its children's rusage): what the client side of one
  # request costs at least, to set against the consumer's CPU per message.
  "$venv/bin/python" - "$downstream" "$out/${1:-ceiling.json}" <<'PY'
import json, re, resource, subprocess, sys
url, path = sys.argv[1], sys.argv[2]
best = None
for threads, connections in ((1, 32), (2, 64), (2, 256)):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", "-d8s", "-s", "bench/wrk-post.lua", url],
                          check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    shape = {"threads": threads, "connections": connections, "requests_per_second": rate,
             "wrk_cpu_us_per_request": cpu / requests * 1e6}
    print(f"wrk -t{threads} -c{connections}: {rate:,.0f} requests/s, wrk CPU {shape['wrk_cpu_us_per_request']:.1f} µs/request",
          file=sys.stderr)
    if best is None or rate > best["requests_per_second"]:
        best = shape
with open(path, "w") as f:
    json.dump({"label": "nginx ceiling (wrk)", **best}, f)
PY
}

# The consumer's settings for every run: the downstream, and a quarantine queue it never
# writes to (every message of the benchmark batch is valid).
ours_env() {
  ours=(--env "DOWNSTREAM_URL=$downstream" --env AWS_LAMBDA_LOG_LEVEL=error
    --env QUARANTINE_QUEUE_URL=https://sqs.us-east-1.amazonaws.com/123456789012/bench-quarantine
    --env AWS_REGION=us-east-1 --env AWS_ACCESS_KEY_ID=bench --env AWS_SECRET_ACCESS_KEY=bench)
}

consumer() {
  start_downstream
  ceiling
  ours_env
  local python=(--env "DOWNSTREAM_URL=$downstream" --env "PYTHONPATH=$root/bench/python"
    --env "LAMBDA_TASK_ROOT=$root/bench/python" --env POWERTOOLS_LOG_LEVEL=ERROR)
  local ric=("$venv/bin/python" -m awslambdaric)

  log "cold starts ($starts each)"
  "$harness/bench-cold-start" --label "batch-consumer" --runs "$starts" --batch 10 \
    --out "$out/cold-consumer.json" "${ours[@]}" -- "$release/batch-consumer"
  "$harness/bench-cold-start" --label "Powertools BatchProcessor (Python)" --runs "$starts" --batch 10 \
    --out "$out/cold-powertools.json" "${python[@]}" -- "${ric[@]}" powertools_consumer.sync_handler

  log "consumer throughput, 5,000 messages ($runs runs each)"
  for concurrency in 1 8 32 128; do
    "$harness/bench-consumer" --label "batch-consumer, CONSUMER_CONCURRENCY=$concurrency" --runs "$runs" \
      --out "$out/throughput-ours-$concurrency.json" "${ours[@]}" --env "CONSUMER_CONCURRENCY=$concurrency" \
      -- "$release/batch-consumer"
  done
  "$harness/bench-consumer" --label "Powertools BatchProcessor + requests" --runs "$runs" \
    --out "$out/throughput-powertools-sync.json" "${python[@]}" -- "${ric[@]}" powertools_consumer.sync_handler
  "$harness/bench-consumer" --label "Powertools AsyncBatchProcessor + aiohttp" --runs "$runs" \
    --out "$out/throughput-powertools-async.json" "${python[@]}" -- "${ric[@]}" powertools_consumer.async_handler
  stop_downstream
}

engine() {
  log "engine overhead (criterion)"
  cargo bench -p sqs-backpressure-bench --bench engine
}

publisher() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" publisher
  fi
  log "publisher: cold starts and fan-out to 1, 10 and 50 targets, next to boto3; then a latency model"
  "$harness/bench-publisher" --targets 1,10,50 --runs 5 --starts "$starts" --model-latency-ms 20 \
    --anchor "$venv/bin/python $root/bench/python/boto3_publisher.py" \
    --out "$out/publisher.json" -- "$release/backlog-publisher"
}

# The idempotency store's CPU and DynamoDB calls per message, first-time and redelivered.
idempotency() {
  if [ -z "${AWS_ENDPOINT_URL_DYNAMODB:-}" ]; then
    cargo build --release -p sqs-backpressure-bench --bin bench-idempotency
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" idempotency
  fi
  log "the idempotency store: CPU and DynamoDB calls per message, 5,000 messages, then redelivered"
  "$release/bench-idempotency" --messages "${BENCH_IDEMPOTENCY_MESSAGES:-5000}" --out "$out/idempotency.json"
}

# batch-consumer on a 6 MB event of 1 MB messages: peak RSS against its memory size.
large_event() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p batch-consumer -p sqs-backpressure-bench --bin bench-large-event
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" large-event
  fi
  log "batch-consumer on a 6 MB event (1 MB messages): peak RSS and duration"
  LAMBDA_HOST_QUIET=1 "$release/bench-large-event" --runs 3 --out "$out/large-event.json" -- "$release/batch-consumer"
}

# simulate on a 31-day CSV (8,928 five-minute rows, 54.8 M messages): wall time and peak RSS.
planner() {
  cargo build --release -p capacity-planner --bin simulate
  python3 bench/planner/month.py "$out/month.csv"
  log "simulate compare on a 31-day trace: time and peak RSS (targets: 10 s, 128 MB)"
  /usr/bin/time -v "$release/simulate" compare --csv "$out/month.csv" --out "$out/planner" \
    >"$out/planner-month.txt" 2>"$out/planner-month.time"
  grep -E "Elapsed|Maximum resident" "$out/planner-month.time"
  log "simulate compare --consumer lambda on the same trace: time and peak RSS"
  /usr/bin/time -v "$release/simulate" compare --consumer lambda --csv "$out/month.csv" \
    --out "$out/planner" >"$out/planner-month-lambda.txt" 2>"$out/planner-month-lambda.time"
  grep -E "Elapsed|Maximum resident" "$out/planner-month-lambda.time"
}

# One quarantine record through S3 against one that fits its queue: time per store call and bytes.
overflow() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p sqs-backpressure-bench --bin bench-overflow
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" overflow
  fi
  log "quarantine records through S3: time per store call, bytes to SQS and S3"
  "$release/bench-overflow" --runs 20 --out "$out/overflow.json"
}

# sqs-worker next to a plain boto3 long-poll worker, both draining moto into nginx, and
# moto's own ceiling; then sqs-worker holding 1,000 messages at once (peak RSS).
worker() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p sqs-worker
    cargo build -p sqs-backpressure-bench --bins
    cargo build --release -p sqs-backpressure-bench --bin bench-sdk-call
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" worker
  fi
  log "one SQS call's CPU against moto: the AWS SDK's client and a bare socket exchange"
  "$release/bench-sdk-call" --calls 300 --gap-ms 10 --out "$out/sdk-call.json"
  start_downstream
  log "sqs-worker next to a boto3 long-poll worker against moto ($runs runs each)"
  "$harness/bench-worker" --downstream "$downstream" --runs "$runs" \
    --messages "${BENCH_WORKER_MESSAGES:-1000}" --in-flight "${BENCH_WORKER_IN_FLIGHT:-1000}" \
    --python-worker "$venv/bin/python $root/bench/python/boto3_worker.py" \
    --out "$out/worker.json" -- "$release/sqs-worker"
  stop_downstream
}

# sqs-backpressure replaying 10,000 quarantine records: --rate 200 held within ±5 %, and the
# unthrottled rate. On LocalStack's SQS: moto's receive takes seconds a call with 3,000 messages queued.
replay() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p sqs-backpressure
    cargo build -p sqs-backpressure-bench --bins
    scripts/emulators.sh install
    LOCALSTACK_SERVICES=cloudwatch,sqs exec scripts/emulators.sh run -- "$0" replay
  fi
  log "sqs-backpressure replay of ${BENCH_REPLAY_RECORDS:-10000} records (LocalStack SQS)"
  AWS_ENDPOINT_URL_SQS=$AWS_ENDPOINT_URL_CLOUDWATCH \
    "$harness/bench-replay" --records "${BENCH_REPLAY_RECORDS:-10000}" --rates 200,0 \
    --out "$out/replay.json" -- "$release/sqs-backpressure"
}

# sqs-backpressure reading a FIFO queue of 10,000 messages in 50 groups: by default (what it sees
# and says), with --rotate-groups (all of it, how long), then each group's order; on LocalStack's
# SQS and on moto (BENCH_FIFO_MESSAGES for moto's run: its receives slow down with the queue's length).
fifo_scan() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p sqs-backpressure
    cargo build -p sqs-backpressure-bench --bins
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" fifo-scan
  fi
  log "sqs-backpressure reading a FIFO queue of 10,000 messages in 50 groups (LocalStack SQS)"
  AWS_ENDPOINT_URL_SQS=$E2E_LOCALSTACK_SQS "$harness/bench-fifo-scan" --messages 10000 --groups 50 \
    --out "$out/fifo-scan-localstack.json" -- "$release/sqs-backpressure"
  log "the same on moto (${BENCH_FIFO_MESSAGES:-10000} messages)"
  "$harness/bench-fifo-scan" --messages "${BENCH_FIFO_MESSAGES:-10000}" --groups 50 \
    --out "$out/fifo-scan-moto.json" -- "$release/sqs-backpressure"
}

# Production scale on fauxqs, the SQS emulator fast enough to measure us (SQS-sized receipt
# handles): the CLI on a standard dead-letter queue of BENCH_SCALE_MESSAGES (100,000) ~1 KB
# messages (stats, export, replay, peak RSS, the emulator's own ceiling beside), --rate held on
# 10,000 records, what a scan holds at 10,000 / 100,000 / 1,000,000 messages, the FIFO read of
# 10,000 messages in 50 groups, and sqs-worker draining 20,000 preloaded work requests beside
# boto3 (the downstream's own ceiling first).
scale() {
  if [ -z "${E2E_FAUXQS_SQS:-}" ]; then
    cargo build --release -p sqs-backpressure -p sqs-worker
    # Release-built: their bare loops are the emulator's ceiling, and a debug SDK is no ceiling.
    cargo build --release -p sqs-backpressure-bench --bin bench-holding --bin bench-scale
    cargo build -p sqs-backpressure-bench --bins
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" scale
  fi
  local messages=${BENCH_SCALE_MESSAGES:-100000}
  log "sqs-backpressure on a dead-letter queue of $messages messages (fauxqs)"
  AWS_ENDPOINT_URL_SQS=$E2E_FAUXQS_SQS "$release/bench-scale" --messages "$messages" \
    --emulator-pid "$E2E_FAUXQS_PID" \
    --out "$out/scale-cli.json" -- "$release/sqs-backpressure"
  log "replay --rate 1000 of 10,000 records (fauxqs)"
  AWS_ENDPOINT_URL_SQS=$E2E_FAUXQS_SQS "$harness/bench-replay" --records 10000 --rates 1000 \
    --out "$out/scale-rate.json" -- "$release/sqs-backpressure"
  log "what a scan holds, at 10,000, 100,000 and 1,000,000 messages"
  "$release/bench-holding" --sizes 10000,100000,1000000 --out "$out/scale-holding.json"
  log "a FIFO queue of 10,000 messages in 50 groups (fauxqs)"
  AWS_ENDPOINT_URL_SQS=$E2E_FAUXQS_SQS "$harness/bench-fifo-scan" --messages 10000 --groups 50 \
    --out "$out/scale-fifo.json" -- "$release/sqs-backpressure"
  install_tools
  start_downstream
  # Beside the worker's rows, not in place of the consumer part's own measure.
  ceiling scale-ceiling.json
  log "sqs-worker next to a boto3 long-poll worker, 20,000 preloaded work requests (fauxqs)"
  AWS_ENDPOINT_URL_SQS=$E2E_FAUXQS_SQS "$harness/bench-worker" --downstream "$downstream" \
    --runs "${BENCH_WORKER_RUNS:-5}" --messages "${BENCH_SCALE_WORKER_MESSAGES:-20000}" --in-flight 0 --preload 1 \
    --pollers 2 --emulator-pid "$E2E_FAUXQS_PID" \
    --label-emulator fauxqs --python-worker "$venv/bin/python $root/bench/python/boto3_worker.py" \
    --out "$out/scale-worker.json" -- "$release/sqs-worker"
  stop_downstream
}

size() {
  log "binary sizes"
  local arm64=null
  if [ "${BENCH_ARM64:-1}" = 1 ] && rustup target list --installed 2>/dev/null | grep -q aarch64-unknown-linux-gnu; then
    scripts/sam.sh install
    PATH="$root/.venv-sam/bin:$PATH" cargo lambda build --release --arm64 \
      --bin backlog-publisher --bin batch-consumer
    arm64=$(printf '{"backlog-publisher": %s, "batch-consumer": %s}' \
      "$(stat -c %s target/lambda/backlog-publisher/bootstrap)" "$(stat -c %s target/lambda/batch-consumer/bootstrap)")
  fi
  printf '{"x86_64": {"backlog-publisher": %s, "batch-consumer": %s}, "arm64": %s}\n' \
    "$(stat -c %s "$release/backlog-publisher")" "$(stat -c %s "$release/batch-consumer")" "$arm64" \
    >"$out/size.json"
  cat "$out/size.json"
}

# Where the consumer's CPU goes on the throughput run: a flame graph, the top symbols, the
# kernel/user split and the system calls per message, into bench/results/.
profile() {
  # Report pipelines end in `head`, which closes the pipe early on purpose.
  local -
  set +o pipefail
  if ! perf stat -e task-clock true >/dev/null 2>&1; then
    log "perf cannot count on this machine: no profile"
    return
  fi
  command -v inferno-flamegraph >/dev/null || cargo install --locked --quiet inferno
  log "profiling the consumer's throughput run (perf)"
  cargo build --profile profiling -p batch-consumer
  start_downstream
  ours_env
  local data="$out/consumer.perf.data" results="$root/bench/results"
  perf record -q -a -F 4999 --call-graph dwarf,16384 -o "$data" -- "$harness/bench-consumer" --label profile \
    --runs 3 "${ours[@]}" -- "$root/target/profiling/batch-consumer" >/dev/null
  perf script -i "$data" --comm batch-consumer 2>/dev/null | inferno-collapse-perf | inferno-flamegraph \
    --title "batch-consumer: 3 × 5,000 messages to nginx (perf, all samples of the process)" \
    >"$results/consumer-throughput.svg"
  {
    echo "# batch-consumer, 3 runs of 5,000 messages to nginx: perf samples of the process"
    perf report -i "$data" --comm batch-consumer --percentage relative --no-children --sort symbol \
      --stdio -g none 2>/dev/null | grep '%' | awk '{gsub("%","",$1); if ($2=="[k]") k+=$1; else u+=$1}
        END {printf "kernel %.1f%%, user space %.1f%%\n\n", k, u}'
    perf report -i "$data" --comm batch-consumer --percentage relative --no-children --sort dso,symbol \
      --stdio -g none 2>/dev/null | grep '%' | head -40 | cut -c1-150
  } >"$results/consumer-throughput-perf.txt"
  perf record -q -e raw_syscalls:sys_enter -a -o "$out/syscalls.perf.data" -- "$harness/bench-consumer" \
    --label syscalls --runs 1 "${ours[@]}" -- "$release/batch-consumer" >/dev/null
  {
    echo "# batch-consumer, one run of 5,000 messages (plus a 10-message warm-up): system calls by number"
    echo "# (x86_64: 20 writev, 45 recvfrom, 232 epoll_wait)"
    perf script -i "$out/syscalls.perf.data" -F comm,trace 2>/dev/null | awk '$1 == "batch-consumer" {print $3}' \
      | sort | uniq -c | sort -rn | head -12
  } >"$results/consumer-syscalls.txt"
  rm -f "$data" "$out/syscalls.perf.data"
  stop_downstream
  cat "$results/consumer-throughput-perf.txt" | head -20
}

report() {
  mkdir -p bench/results
  "$venv/bin/python" bench/report.py "$out" "$root/target/criterion" >bench/results/latest.md
  cat bench/results/latest.md
}

mkdir -p "$out"
# sqs-backpressure doctor --all over BENCH_DOCTOR_QUEUES (1,000) queues on fauxqs, a third of them
# dead-letter queues their sources name: wall time, peak RSS (GNU time) and the calls' pacing;
# Lambda's calls go to moto, CloudWatch's to LocalStack.
doctor() {
  if [ -z "${AWS_ENDPOINT_URL_SQS:-}" ]; then
    cargo build --release -p sqs-backpressure
    scripts/emulators.sh install
    exec scripts/emulators.sh run -- "$0" doctor
  fi
  local count=${BENCH_DOCTOR_QUEUES:-1000} report="$out/doctor-all.json"
  mkdir -p "$out"
  log "doctor --all over $count queues on fauxqs"
  .venv/bin/python bench/doctor_queues.py --endpoint "$E2E_FAUXQS_SQS" --count "$count" --prefix "doc$$"
  AWS_ENDPOINT_URL_LAMBDA=$AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_SQS=$E2E_FAUXQS_SQS \
    /usr/bin/time -f '{"wall_s": %e, "peak_rss_kb": %M}' -o "$out/doctor-all-time.json" \
    "$release/sqs-backpressure" doctor --all --json >"$report" 2>"$out/doctor-all.stderr" || true
  python3 - "$report" "$out/doctor-all-time.json" <<'PY'
import json, sys
# GNU time writes "Command exited with non-zero status N" first when doctor found something.
report, timed = json.load(open(sys.argv[1])), json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(json.dumps({**timed, "read": report["read"], "findings": len(report["findings"]),
                  "unreadable": len(report["unreadable"]), "exit": report["exit"]}))
PY
}

# The functions' own log lines are not part of the benchmark's output.
export LAMBDA_HOST_QUIET=1
case "${1:-all}" in
  all)
    install_tools
    build
    rm -f "$out"/*.json
    init
    consumer
    engine
    "$0" publisher
    "$0" worker
    "$0" idempotency
    "$0" large-event
    "$0" overflow
    planner
    "$0" replay
    "$0" fifo-scan
    "$0" scale
    size
    profile
    report
    ;;
  init) init ;;
  consumer) install_tools; consumer ;;
  engine) engine ;;
  publisher) install_tools; publisher ;;
  worker) install_tools; worker ;;
  idempotency) idempotency ;;
  large-event) large_event ;;
  overflow) overflow ;;
  planner) planner ;;
  replay) replay ;;
  doctor) doctor ;;
  fifo-scan) fifo_scan ;;
  scale) scale ;;
  size) size ;;
  profile) install_tools; profile ;;
  report) report ;;
  *) echo "usage: $0 [all|init|consumer|engine|publisher|worker|idempotency|large-event|overflow|planner|replay|doctor|fifo-scan|scale|size|profile|report]" >&2; exit 2 ;;
esac

"""Turns the JSON results of bench/run.sh into the Markdown table of bench/results/latest.md.

usage: report.py RESULTS_DIR CRITERION_DIR
Every target of the benchmark issue gets a row saying met or missed, with the numbers.
"""

import datetime
import json
import os
import platform
import sys

import report_scale
from report_common import check, fmt, span, targets

results_dir, criterion_dir = sys.argv[1], sys.argv[2]
MB = 1_000_000


def load(name):
    path = os.path.join(results_dir, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def criterion(bench):
    path = os.path.join(criterion_dir, "batch-5000", bench, "new", "estimates.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6  # ns → ms


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


out = []
p = out.append
p(f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} × {cpu()}, "
  f"{platform.system()} {platform.release()}. Medians, with (min–max) over the runs.\n")

# Cold start
cold_consumer, cold_powertools = load("cold-consumer.json"), load("cold-powertools.json")
publisher = load("publisher.json") or {}
cold_publisher = publisher.get("cold_start")
p("### Cold start (process start → first `GET /next`; then the first invocation)\n")
p("| Function | Runs | Init, ms | First invocation, ms |")
p("|---|---:|---:|---:|")
for label, r in (("backlog-publisher (1 target, emulators)", cold_publisher),
                 ("batch-consumer (10 messages)", cold_consumer),
                 ("Powertools BatchProcessor, Python + awslambdaric (10 messages)", cold_powertools)):
    if r:
        p(f"| {label} | {r['runs']} | {span(r['init_ms'], 2)} | {span(r['first_invocation_ms'], 2)} |")
for label, r in (("backlog-publisher", cold_publisher), ("batch-consumer", cold_consumer)):
    init = r["init_ms"]["median"] if r else None
    check(f"{label} cold start ≤ 20 ms", f"{fmt(init, 2)} ms", None if init is None else init <= 20)
if cold_consumer and cold_powertools:
    ratio = cold_powertools["init_ms"]["median"] / cold_consumer["init_ms"]["median"]
    check("regression: cold start ≥ 10× faster than the Powertools consumer",
          f"{fmt(cold_consumer['init_ms']['median'], 2)} ms: {ratio:.1f}× faster", ratio >= 10,
          f"Powertools: {fmt(cold_powertools['init_ms']['median'], 1)} ms")

# Init against the floor
# Lambda's arm64 price per GB-second (us-east-1, first tier), and the smallest memory size.
ARM64_GB_SECOND_USD = 0.0000133334
MEMORY_GB = 128 / 1024
init_run = load("init.json")
if init_run:
    functions = init_run["functions"]
    floor = functions["floor"]["init_ms"]["median"]
    p(f"\n### Init against the floor ({init_run['rounds']} interleaved rounds: process start → first `GET /next`)\n")
    p("The floor is a bare `lambda_runtime` hello world (`bench/floor`, same release profile). Cost: a "
      "million inits (the init alone, not the first invocation) at Lambda's arm64 price for 128 MB, "
      "and what we add to the floor's.\n")
    p("| Binary | Init, ms | × the floor | $ per million inits | above the floor |")
    p("|---|---:|---:|---:|---:|")
    for label, r in sorted(functions.items(), key=lambda item: item[1].get("function") != "floor"):
        median = r["init_ms"]["median"]
        cost = median / 1e3 * MEMORY_GB * ARM64_GB_SECOND_USD * 1e6
        extra = (median - floor) / 1e3 * MEMORY_GB * ARM64_GB_SECOND_USD * 1e6
        p(f"| {label} | {span(r['init_ms'], 2)} | {r['ratio_to_floor']:.2f} | {cost:.4f} | {extra:+.4f} |")
    for label, r in functions.items():
        if r.get("function") in ("publisher", "consumer"):
            ratio = r["ratio_to_floor"]
            check(f"regression: {label} init ≤ 2× a bare lambda_runtime function",
                  f"{fmt(r['init_ms']['median'], 2)} ms = {ratio:.2f}×", ratio <= 2,
                  f"bare lambda_runtime: {fmt(floor, 2)} ms")

# Throughput
ceiling = load("ceiling.json")
ours = {}
for name in sorted(os.listdir(results_dir)):
    if name.startswith("throughput-ours-"):
        r = load(name)
        ours[int(name.removeprefix("throughput-ours-").removesuffix(".json"))] = r
sync, async_ = load("throughput-powertools-sync.json"), load("throughput-powertools-async.json")
p("\n### Consumer throughput (5,000 messages, ~6 MB batch, nginx answering 204)\n")
p("| Consumer | Runs | Messages/s | Invocation, ms | CPU, µs per message | Peak RSS, MiB |")
p("|---|---:|---:|---:|---:|---:|")
for r in [ours[k] for k in sorted(ours)] + [x for x in (sync, async_) if x]:
    cpu = r.get("cpu_ms")
    per_message = fmt(cpu["median"] * 1e3 / r["messages"], 1) if cpu else "—"
    p(f"| {r['label']} | {r['runs']} | {span(r['messages_per_second'], 0)} | {span(r['invocation_ms'], 0)} | "
      f"{per_message} | {span(r['peak_rss_mib'], 1)} |")
if ceiling:
    shape = f"-t{ceiling.get('threads', '?')} -c{ceiling.get('connections', '?')}"
    wrk_cpu = ceiling.get("wrk_cpu_us_per_request")
    p(f"| downstream ceiling: wrk {shape} → nginx, same requests (best of 3 shapes) | — | "
      f"{fmt(ceiling['requests_per_second'], 0)} | — | {fmt(wrk_cpu, 1)} (wrk's own) | — |")
default = ours.get(32)
if default:
    rate = default["messages_per_second"]["median"]
    if sync:
        s = sync["messages_per_second"]["median"]
        check("throughput ≥ 10× Powertools BatchProcessor", f"{rate:,.0f} / {s:,.0f} msg/s = {rate / s:.1f}×", rate / s >= 10)
    if async_:
        a = async_["messages_per_second"]["median"]
        check("throughput ≥ 2× Powertools AsyncBatchProcessor", f"{rate:,.0f} / {a:,.0f} msg/s = {rate / a:.1f}×", rate / a >= 2)
    if ceiling:
        c = ceiling["requests_per_second"]
        cpu = default.get("cpu_ms")
        cost = ""
        if cpu and ceiling.get("wrk_cpu_us_per_request"):
            cost = (f"; CPU per message {cpu['median'] * 1e3 / default['messages']:.1f} µs against wrk's "
                    f"{ceiling['wrk_cpu_us_per_request']:.1f} µs per request")
        check("batch-consumer: ≥ ½ the downstream's ceiling (5,000-message batch, CONSUMER_CONCURRENCY=32)",
              f"{rate:,.0f} msg/s = {rate / c:.2f} of the ceiling{cost}", rate / c >= 0.5,
              f"{c:,.0f} req/s (wrk → nginx, best of 3 shapes)")
if ours:
    peak = max(r["peak_rss_mib"]["max"] for r in ours.values())
    check("peak RSS on the 6 MB batch ≤ 64 MB", f"{peak:.1f} MiB (highest of every run above)", peak * 1.048576 <= 64)
    check("regression: batch-consumer peak RSS ≤ 32 MB", f"{peak * 1.048576:.1f} MB (highest of the throughput runs)",
          peak * 1.048576 <= 32)
publisher_rss = [r["ours"].get("peak_rss_mib") for r in publisher.get("results", [])]
publisher_rss = [r for r in publisher_rss if r is not None]
if publisher_rss:
    peak = max(publisher_rss)
    check("regression: backlog-publisher peak RSS ≤ 32 MB",
          f"{peak * 1.048576:.1f} MB (highest after the warm runs of 1, 10 and 50 targets)", peak * 1.048576 <= 32)

# Engine overhead
bare, typed, engine = criterion("bare-parse"), criterion("typed-parse"), criterion("engine-no-op")
p("\n### Engine overhead (criterion, `cargo bench -p backpressure-core --features fixtures`)\n")
p("| Work on the 5,000-message event | Median, ms |")
p("|---|---:|")
p(f"| bare `serde_json::from_slice::<Value>` | {fmt(bare, 2)} |")
p(f"| bare `serde_json::from_slice::<aws_lambda_events::sqs::SqsEvent>` (typed) | {fmt(typed, 2)} |")
p(f"| engine: parse the event, check each body's contract, run a no-op processor, build the report | {fmt(engine, 2)} |")
if bare and engine:
    # Judged against the faster of the two floors, whichever it is.
    floor, name = min((bare, "Value"), (typed or bare, "typed"))
    check("engine overhead ≤ 1.5× the bare parse",
          f"{engine:.2f} / {floor:.2f} ms ({name} parse, the faster floor) = {engine / floor:.2f}×; "
          f"against the other floor {engine / max(bare, typed or bare):.2f}×",
          engine / floor <= 1.5)


def envelope_ms(bench):
    path = os.path.join(criterion_dir, "envelope-5000", bench, "new", "estimates.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


plain = envelope_ms("engine-plain")
if plain:
    p("\n### Envelope cost (criterion, the same 5,000 work requests inside an envelope)\n")
    p("| Bodies | Open alone, ms | Engine from parsed records, ms | Engine from the event's bytes, ms |")
    p("|---|---:|---:|---:|")
    for name in ("plain", "sns", "eventbridge"):
        p(f"| {name} | {fmt(envelope_ms('open-' + name), 2)} | {fmt(envelope_ms('engine-' + name), 2)} "
          f"| {fmt(envelope_ms('bytes-' + name), 2)} |")
    for name in ("sns", "eventbridge"):
        engine = envelope_ms("engine-" + name)
        if engine:
            check(f"{name} envelope ≤ 10 % of the engine's per-message time",
                  f"{engine:.2f} against {plain:.2f} ms from parsed records: +{(engine / plain - 1) * 100:.0f} %",
                  engine <= plain * 1.10)

# Publisher
if publisher.get("results"):
    p("\n### Publisher fan-out (emulators: moto for SQS and ECS, LocalStack for CloudWatch)\n")
    p("| Targets | Ours, ms | Ours: API calls (SQS / ECS / CloudWatch) | boto3 sequential, ms | boto3: API calls |")
    p("|---:|---:|---|---:|---|")
    walls = {}
    for r in publisher["results"]:
        o, b = r["ours"], r["boto3"] or {}
        calls = " / ".join(str(o["calls"][s]["total"]) for s in ("sqs", "ecs", "cloudwatch"))
        bcalls = " / ".join(str(b["calls"][s]) for s in ("sqs", "ecs", "cloudwatch")) if b else "—"
        walls[r["targets"]] = (o["wall_ms"]["median"], b.get("wall_ms", {}).get("median"))
        p(f"| {r['targets']} | {span(o['wall_ms'], 1)} | {calls} | {span(b.get('wall_ms'), 1)} | {bcalls} |")
    p("\nThe emulators' own scaling, measured from the harness with no function involved: one "
      "`GetQueueAttributes` alone, then one per target all at once; `PutMetricData` with one "
      "target's datums, then every target's.\n")
    p("| Targets | GetQueueAttributes alone, ms | all at once, ms | PutMetricData, ms (datums) |")
    p("|---:|---:|---:|---|")
    for r in publisher["results"]:
        e = r.get("emulator_probe")
        if e:
            put = ", ".join(f"{fmt(ms, 1)} ({n})" for n, ms in sorted(e["put_metric_data_ms_by_datums"].items(), key=lambda kv: int(kv[0])))
            p(f"| {r['targets']} | {span(e['get_queue_attributes_alone_ms'], 1)} | "
              f"{fmt(e['get_queue_attributes_all_at_once_ms'], 1)} | {put} |")
    floors = {}
    for r in publisher["results"]:
        e = r.get("emulator_probe")
        if e:
            puts = e["put_metric_data_ms_by_datums"]
            floors[r["targets"]] = e["get_queue_attributes_all_at_once_ms"] + puts[max(puts, key=int)]
    if 1 in floors and 50 in floors:
        p(f"\nThe emulators' floor (their `GetQueueAttributes` for every target at once plus one "
          f"`PutMetricData` of every datum, no DescribeServices): 1 target {floors[1]:.1f} ms, "
          f"50 targets {floors[50]:.1f} ms, **{floors[50] / floors[1]:.1f}×**. Ours: "
          f"{walls[1][0] / floors[1]:.2f}× and {walls[50][0] / floors[50]:.2f}× that floor.")
    model = {r["targets"]: r["latency_model"] for r in publisher["results"] if r.get("latency_model")}
    if model:
        delay = next(iter(model.values()))["latency_ms"]
        p(f"\nOurs against a latency model (`bench/src/latency_model.rs`: every call answered after "
          f"{delay} ms, all concurrently, as a regional endpoint would; not AWS and not an emulator):\n")
        p("| Targets | Ours, ms |")
        p("|---:|---:|")
        for count in sorted(model):
            p(f"| {count} | {span(model[count]['wall_ms'], 1)} |")
        if 1 in model and 50 in model:
            m1, m50 = model[1]["wall_ms"]["median"], model[50]["wall_ms"]["median"]
            check(f"publisher: 50 targets ≤ 3× the wall time of 1, against the latency model ({delay} ms per call)",
                  f"{m50:.1f} / {m1:.1f} ms = {m50 / m1:.2f}×", m50 / m1 <= 3)
    if 1 in walls and 50 in walls:
        ratio = walls[50][0] / walls[1][0]
        anchor = f"; boto3: {walls[50][1] / walls[1][1]:.1f}×" if walls[1][1] else ""
        floor = f"; the emulators alone: {floors[50] / floors[1]:.1f}×" if 1 in floors and 50 in floors else ""
        check("publisher: 50 targets ≤ 3× the wall time of 1",
              f"{walls[50][0]:.1f} / {walls[1][0]:.1f} ms = {ratio:.1f}×{anchor}{floor}", ratio <= 3)

# sqs-worker
worker = load("worker.json")
if worker:
    p(f"\n### sqs-worker against moto ({worker['messages']} messages a run, fed in waves of 50 to a polling worker; "
      f"nginx answering 204)\n")
    p("| Worker | Messages/s | CPU, µs per message | Peak RSS, MiB |")
    p("|---|---:|---:|---:|")
    rows = {r["label"]: r for r in worker["rows"]}
    for r in worker["rows"]:
        p(f"| {r['label']} | {span(r['messages_per_second'], 1)} | {span(r.get('cpu_us_per_message'), 0)} | "
          f"{span(r.get('peak_rss_mib'), 1)} |")
    held = worker.get("in_flight")
    if held:
        p(f"\nsqs-worker holding {held['messages']} messages (`WORKER_MAX_IN_FLIGHT={held['messages']}`) that the "
          f"downstream answers only once the queue counts them all in flight:\n")
        p("| `CONSUMER_CONCURRENCY` | Most in flight (queue's count) | Peak RSS, all held, MiB | Peak RSS, to the end, MiB | Exit after SIGTERM |")
        p("|---|---:|---:|---:|---:|")
        for h in (held, worker.get("in_flight_all_at_the_downstream")):
            if h:
                p(f"| {h['consumer_concurrency']} | {h['most_in_flight']} | {h['peak_rss_mib_all_held']:.1f} | "
                  f"{h['peak_rss_mib']:.1f} | {h['exit_code']} |")
    call = load("sdk-call.json")
    if call:
        p("\nOne empty `ReceiveMessage` against moto (which closes every connection), 300 calls a row; the bare "
          "socket exchange is what any client pays here:\n")
        p("| Caller | Calls apart | CPU, µs per call | Wall, µs per call |")
        p("|---|---:|---:|---:|")
        for r in call["rows"]:
            p(f"| {r['caller']} | {r['gap_ms']} ms | {r['cpu_us_per_call']:,.0f} | {r['wall_us_per_call']:,.0f} |")
    ours_w = next((r for r in worker["rows"] if r["label"].startswith("sqs-worker")), None)
    python_w = next((r for r in worker["rows"] if "Python" in r["label"]), None)
    bare = next((r for r in worker["rows"] if "ceiling" in r["label"]), None)
    if ours_w and python_w:
        o, y = ours_w["cpu_us_per_message"]["median"], python_w["cpu_us_per_message"]["median"]
        check("sqs-worker: ≥ 10× less CPU per message than the boto3 worker",
              f"{y:,.0f} / {o:,.0f} µs = {y / o:.1f}×", y / o >= 10)
    if ours_w and bare:
        o, b = ours_w["messages_per_second"]["median"], bare["messages_per_second"]["median"]
        check("sqs-worker: ≥ 80 % of moto's bare receive/delete loop",
              f"{o:,.1f} / {b:,.1f} msg/s = {o / b:.0%}", o / b >= 0.8)
    if held:
        check(f"sqs-worker: ≤ 32 MB RSS with {held['messages']:,} messages in flight",
              f"{held['peak_rss_mib'] * 1.048576:.1f} MB with {held['most_in_flight']} in flight",
              held["peak_rss_mib"] * 1.048576 <= 32 and held["most_in_flight"] >= held["messages"])

# sqs-backpressure replay
replay = load("replay.json")
if replay:
    p(f"\n### sqs-backpressure replay of {replay['records']:,} quarantine records (LocalStack's SQS)\n")
    p("| Run | Replayed | Arrived | Left | Send rate, msg/s | Overall, msg/s | Off the rate |")
    p("|---|---:|---:|---:|---:|---:|---:|")
    for r in replay["rows"]:
        dev = r.get("deviation_percent")
        p(f"| {r['label']} | {r['replayed']:,} | {fmt(r.get('arrived'), 0)} | {fmt(r.get('left_in_quarantine'), 0)} | "
          f"{fmt(r.get('send_rate'))} | {fmt(r['messages_per_second'])} | {'—' if dev is None else f'{dev:+.2f} %'} |")
    rated = next((r for r in replay["rows"] if r.get("rate")), None)
    free = next((r for r in replay["rows"] if r.get("rate") == 0), None)
    if rated:
        check(f"replay: --rate {rated['rate']:g} achieved within ±5 %",
              f"{rated['send_rate']:.1f} msg/s ({rated['deviation_percent']:+.2f} %)",
              abs(rated["deviation_percent"]) <= 5 and rated["arrived"] == replay["records"])
    if free:
        check("replay: unthrottled ≥ 500 messages/s", f"{free['messages_per_second']:.0f} msg/s",
              free["messages_per_second"] >= 500 and free["arrived"] == replay["records"])

# Production scale (bench/run.sh scale, on fauxqs)
report_scale.render(load, p)

# Size
size = load("size.json")
if size:
    p("\n### Stripped release binaries\n")
    p("| Function | x86_64, bytes | arm64, bytes |")
    p("|---|---:|---:|")
    for name in ("backlog-publisher", "batch-consumer"):
        arm = (size.get("arm64") or {}).get(name)
        p(f"| {name} | {size['x86_64'][name]:,} | {'—' if arm is None else f'{arm:,}'} |")
        for arch in ("x86_64", "arm64"):
            n = (size.get(arch) or {}).get(name)
            if n is not None:
                check(f"{name} ({arch}) ≤ 8 MB", f"{n / MB:.2f} MB ({n:,} bytes)", n <= 8 * MB)

p("\n### Targets\n")
p("| Target | Measured | Ceiling it is judged against | |")
p("|---|---|---|---|")
for target, measured, ceiling_text, met in targets:
    p(f"| {target} | {measured} | {ceiling_text} | {met} |")
print("\n".join(out))

"""The production-scale tables of bench/report.py: the CLI on 100,000 messages, what a scan holds,
the FIFO read and sqs-worker on fauxqs, each with its targets."""

from report_common import busy, check, fmt, span


def render(load, p):
    """Appends the scale part's tables to the report (`p`) and their targets."""
    scale = load("scale-cli.json")
    if scale:
        n = scale["messages"]
        p(f"\n### Production scale: the CLI on a standard dead-letter queue of {n:,} ~1 KB messages (fauxqs, "
          f"receipt handles of {scale['receipt_handle_chars']} characters)\n")
        p("| Command | Exit | Seconds | Messages/s | Peak RSS, MiB | CPU s: CLI / emulator | Exactly once |")
        p("|---|---:|---:|---:|---:|---|---|")
        rows = {r["label"].split(" ")[0]: r for r in scale["rows"]}
        for r in scale["rows"]:
            if "ceiling" in r["label"]:
                p(f"| {r['label']} | — | {r['seconds']:.1f} | {r['messages_per_second']:,.0f} | — | "
                  f"— / {fmt(r.get('emulator_cpu_s'))} | {r['messages']:,} |")
                continue
            kind = r["label"].split(" ")[0]
            if kind == "stats":
                once = f"read {r.get('read')}, complete {r.get('complete')}"
            elif kind == "export":
                once = f"{r['lines']:,} lines, {r['distinct_messages']:,} distinct"
            else:
                once = (f"{r['replayed']:,} replayed ({r['distinct_replayed']:,} distinct), "
                        f"{r['arrived']:,} arrived, {r['left_on_source']} left")
            cpu = f"{fmt(r.get('cli_cpu_s'))} / {fmt(r.get('emulator_cpu_s'))}"
            p(f"| `{r['label']}` | {r['exit_code']} | {r['seconds']:.1f} | {n / r['seconds']:,.0f} | {r['peak_rss_mib']:.1f} | {cpu} | {once} |")
        st, ex, rp = rows.get("stats"), rows.get("export"), rows.get("replay")
        ceil = next((r for r in scale["rows"] if "send/delete" in r["label"]), None)
        reads = [r for r in scale["rows"] if "then release" in r["label"]]
        read_ceil = max(reads, key=lambda r: r["messages_per_second"]) if reads else None

        def read_ceiling_text(r):
            return (f"{r['messages_per_second']:,.0f} msg/s ({r['loops']} bare receive loop(s), then release); "
                    f"fauxqs {busy(r) * 100:.0f} % busy" if busy(r) is not None else "")

        for row, name in ((st, "stats --json"), (ex, "export")):
            if not row:
                continue
            if row is st:
                check(f"scale: stats --json reads all {n:,}, exit 0", f"read {st['read']}, exit {st['exit_code']}",
                      st["read"] == n and st["exit_code"] == 0)
            else:
                check(f"scale: export writes each of {n:,} once",
                      f"{ex['lines']:,} lines, {ex['distinct_messages']:,} distinct",
                      ex["lines"] == n and ex["distinct_messages"] == n)
            if read_ceil:
                rate = n / row["seconds"]
                check(f"scale: {name} ≥ 90 % of the emulator's read ceiling",
                      f"{rate:,.0f} msg/s ({rate / read_ceil['messages_per_second'] * 100:.0f} %)",
                      rate >= 0.9 * read_ceil["messages_per_second"], read_ceiling_text(read_ceil))
            if busy(row) is not None:
                check(f"scale: fauxqs busy ≥ 85 % of a core during {name}", f"{busy(row) * 100:.0f} %",
                      busy(row) >= 0.85, f"{busy(read_ceil) * 100:.0f} % at its read ceiling"
                      if read_ceil and busy(read_ceil) is not None else "—")
        if rp:
            check(f"scale: replay moves each of {n:,} once, source empty",
                  f"{rp['replayed']:,} replayed, {rp['arrived']:,} arrived, {rp['left_on_source']} left",
                  rp["replayed"] == n and rp["distinct_replayed"] == n and rp["arrived"] == n and rp["left_on_source"] == 0)
            rate = n / rp["seconds"]
            if ceil:
                ceiling_text = f"{ceil['messages_per_second']:,.0f} msg/s ({ceil['label'].removeprefix('emulator ceiling: ')})"
                check("scale: replay ≥ 80 % of the emulator's 4-loop receive/send/delete ceiling",
                      f"{rate:,.0f} msg/s ({rate / ceil['messages_per_second'] * 100:.0f} %)",
                      rate >= 0.8 * ceil["messages_per_second"], ceiling_text)
            if busy(rp) is not None:
                check("scale: fauxqs busy ≥ 85 % of a core during replay", f"{busy(rp) * 100:.0f} %", busy(rp) >= 0.85,
                      f"{busy(ceil) * 100:.0f} % at the 4-loop ceiling" if ceil and busy(ceil) is not None else "—")
        for r in (st, ex, rp):
            if r:
                check(f"scale: {r['label']} peak RSS ≤ 64 MB", f"{r['peak_rss_mib'] * 1.048576:.1f} MB",
                      r["peak_rss_mib"] * 1.048576 <= 64)
    rated = load("scale-rate.json")
    if rated:
        r = next((r for r in rated["rows"] if r.get("rate")), None)
        if r:
            check(f"scale: replay --rate {r['rate']:g} held within 2 % ({rated['records']:,} records)",
                  f"{r['send_rate']:.1f} msg/s ({r['deviation_percent']:+.2f} %)",
                  abs(r["deviation_percent"]) <= 2 and r["arrived"] == rated["records"], f"{r['rate']:g} msg/s asked")
    holding = load("scale-holding.json")
    if holding:
        p(f"\n### What a scan holds, as the queue grows (leases with {holding['handle_chars']}-character receipt "
          "handles and the ids read; a fresh process each)\n")
        p("| Kept | Messages held | Seconds | Peak RSS, MiB |")
        p("|---|---:|---:|---:|")
        for r in holding["rows"]:
            kept = "temporary stores (as the CLI)" if r["store"] == "spill" else "in-memory maps (before)"
            p(f"| {kept} | {r['held']:,} | {r['seconds']:.1f} | {r['peak_rss_mib']:.1f} |")
        spill = sorted((r for r in holding["rows"] if r["store"] == "spill"), key=lambda r: r["held"])
        if len(spill) >= 2:
            check(f"scale: what a scan holds is flat ({spill[0]['held']:,} → {spill[-1]['held']:,} held)",
                  f"{spill[0]['peak_rss_mib']:.1f} → {spill[-1]['peak_rss_mib']:.1f} MiB",
                  spill[-1]["peak_rss_mib"] <= spill[0]["peak_rss_mib"] + 16)
    fifo = load("scale-fifo.json")
    if fifo:
        d, m, a = fifo["default"], fifo["rotate_groups"], fifo["after"]
        p(f"\n### A FIFO queue of {fifo['messages']:,} messages in {fifo['groups']} groups (fauxqs)\n")
        p("| Read | Exit | Read | Seconds |")
        p("|---|---:|---:|---:|")
        p(f"| `stats` | {d['exit']} | {d['read']} | {d['seconds']:.1f} |")
        p(f"| `stats --rotate-groups` | {m['exit']} | {m['read']} | {m['seconds']:.1f} |")
        p(f"\nAfterwards: {a['messages']:,} messages, {a['groups_in_order']} of {a['groups_expected']} groups whole and in order.")
        check(f"scale: FIFO {fifo['messages']:,} in {fifo['groups']} groups read whole with --rotate-groups, order kept",
              f"read {m['read']}, exit {m['exit']}, {a['groups_in_order']} of {a['groups_expected']} groups in order",
              m["read"] == fifo["messages"] and m["exit"] == 0 and a["groups_in_order"] == a["groups_expected"]
              and a["messages"] == fifo["messages"])
    sw = load("scale-worker.json")
    if sw:
        p(f"\n### sqs-worker draining {sw['messages']:,} preloaded work requests ({sw['emulator']}; nginx answering 204)\n")
        p("| Worker | Messages/s | CPU, µs per message | Peak RSS, MiB | fauxqs's CPU, share of a core |")
        p("|---|---:|---:|---:|---:|")
        for r in sw["rows"]:
            share = r.get("emulator_cpu_share_of_a_core")
            share = f"{share['median'] * 100:.0f} %" if share else ""
            p(f"| {r['label']} | {span(r['messages_per_second'], 0)} | {span(r.get('cpu_us_per_message'), 0)} | "
              f"{span(r.get('peak_rss_mib'), 1)} | {share} |")
        ours = next((r for r in sw["rows"] if r["label"].startswith("sqs-worker")), None)
        boto = next((r for r in sw["rows"] if "boto3" in r["label"]), None)
        if ours and boto:
            o, b = ours["cpu_us_per_message"], boto["cpu_us_per_message"]
            ratio = b["median"] / o["median"]
            runs = sw.get("runs") or 0
            check(f"scale: sqs-worker ≥ 20× less CPU per message than boto3 (median of ≥ 5 runs; {runs} here)",
                  f"{span(o, 0)} vs {span(b, 0)} µs: {ratio:.1f}× (worst pairing {b['min'] / o['max']:.1f}×, "
                  f"best {b['max'] / o['min']:.1f}×)", ratio >= 20 and runs >= 5)
            rate = ours["messages_per_second"]["median"]
            share = ours.get("emulator_cpu_share_of_a_core")
            runs_cpu = [c * r / 1e6 for c, r in zip(o.get("samples", []), ours["messages_per_second"].get("samples", []))]
            own = sorted(runs_cpu)[len(runs_cpu) // 2] if runs_cpu else o["median"] * rate / 1e6
            bare_loop = next((r for r in sw["rows"] if "bare" in r["label"]), None)
            if share:
                check("scale: sqs-worker's messages/s limited by the emulator (fauxqs ≥ 85 % of a core)",
                      f"{rate:,.0f} msg/s; fauxqs {share['median'] * 100:.0f} % of a core, the worker {own * 100:.0f} %",
                      share["median"] >= 0.85,
                      f"none: one bare receive/delete loop, {bare_loop['messages_per_second']['median']:,.0f} msg/s, "
                      "makes one call at a time" if bare_loop else "—")
            peak = ours.get("peak_rss_mib")
            if peak:
                check("regression: sqs-worker peak RSS ≤ 32 MB", f"{peak['max'] * 1.048576:.1f} MB (highest run)",
                      peak["max"] * 1.048576 <= 32)

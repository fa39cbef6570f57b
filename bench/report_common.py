"""What bench/report.py and its parts share: number formats and the targets table's rows."""


def fmt(x, digits=1):
    return "—" if x is None else f"{x:,.{digits}f}"


def span(summary, digits=1):
    if not summary:
        return "—"
    return f"{fmt(summary['median'], digits)} ({fmt(summary['min'], digits)}–{fmt(summary['max'], digits)})"


targets = []  # (target, measured, ceiling, met)


def check(target, measured, met, ceiling="—"):
    """A target's row: what was measured, the ceiling it is judged against (or "—"), the verdict."""
    verdict = "met" if met else ("**missed**" if met is not None else "not measured")
    targets.append((target, measured, ceiling, verdict))


def busy(row):
    """The emulator's CPU over a row's wall time: its share of one core."""
    cpu = row.get("emulator_cpu_s")
    return None if cpu is None else cpu / row["seconds"]

"""A 31-day CloudWatch-style trace for bench/run.sh planner: 8,928 five-minute rows,
about 54.8 million messages, a daily cycle. Usage: month.py OUT.csv"""
import math
import sys

START = 1_796_000_000 - 1_796_000_000 % 300
rows = []
for i in range(8928):
    hour = (i * 5 / 60) % 24
    rows.append(f"{START + i * 300},{int(6138 * (1 + 0.8 * math.sin((hour - 8) / 24 * 2 * math.pi)))}")
with open(sys.argv[1], "w") as out:
    out.write("timestamp,arrivals\n" + "\n".join(rows) + "\n")

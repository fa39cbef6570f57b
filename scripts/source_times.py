"""A clean clone gives every file the time of the clone, newer than anything in a cached target
dir, so cargo would rebuild every package of the workspace on every CI run, changed or not. This
gives cargo back what a developer's checkout has: each file's time is when its content was first
built, so cargo rebuilds only the packages whose files changed.

    source_times.py begin TARGET_DIR   before the builds: each tracked file whose content is the
                                       one recorded gets its recorded time; the record is then
                                       set aside, and a pending one written for this run
    source_times.py end TARGET_DIR     after them, however they ended: the pending record becomes
                                       the record

A file's recorded time is the start of the first run that built its current content: every unit
built from that content since has a newer dep-info file, so it stays fresh, while a unit built from
any other content is older, so cargo rebuilds it rather than reuse it. A run killed before `end`
leaves no record, and the next one keeps the clone's times: every package is rebuilt, never a
stale one reused. A file that is not tracked by git keeps the clone's time.

The record holds the clone's path too. A build compiles paths in (`env!("CARGO_MANIFEST_DIR")`,
`include_str!`, insta's snapshot directory), and cargo does not rebuild a unit when only the
workspace's path changed: a clone at another path would run tests that read the last clone's
files. So a clone at another path keeps the clone's times, and every package is rebuilt.
"""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True).stdout
    return [name for name in out.decode().split("\0") if name and os.path.isfile(name)]


def digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("begin", "end"):
        print(__doc__, file=sys.stderr)
        return 2
    command, target = sys.argv[1], Path(sys.argv[2])
    record, pending = target / "sources.json", target / "sources.pending.json"
    if command == "end":
        if pending.exists():
            pending.replace(record)
        return 0
    now = int(time.time())
    root = os.getcwd()
    recorded = json.loads(record.read_text()) if record.exists() else {}
    last = recorded.get("files", {}) if recorded.get("root") == root else {}
    if recorded and not last:
        print(f"source times: the cache was last built from another path than {root}: paths "
              "compiled into the tests would point there, so every package is rebuilt")
    record.unlink(missing_ok=True)
    files, kept = {}, 0
    for path in tracked_files():
        content = digest(path)
        hash_and_time = last.get(path)
        if hash_and_time and hash_and_time[0] == content:
            os.utime(path, (hash_and_time[1], hash_and_time[1]))
            files[path] = hash_and_time
            kept += 1
        else:
            files[path] = [content, now]
    target.mkdir(parents=True, exist_ok=True)
    pending.write_text(json.dumps({"root": root, "files": files}))
    print(f"source times: {kept} of {len(files)} files as the cache last built them")
    return 0


if __name__ == "__main__":
    sys.exit(main())

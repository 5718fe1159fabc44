"""Seed 000's auth work in Python, as processing/python/auth.py does it, each phase timed apart.

    python3 phases.py --users PATH --id N --password P [--iterations K] [--warmup W]

One iteration: read the file (open + read, as json.load does), json.loads, next(filter(...)),
hashlib.sha512 hex, then drop the parsed users (auth.py frees them when it returns, inside its timed
iteration). stdout: `hash <hex>`, then `phases <read> <parse> <search> <hash> <free>` in ns
(time.perf_counter_ns) per timed iteration. Runs on Python 3.8 (the article's) and later.
"""

import hashlib
import json
import sys
import time


def integer(flag, text, minimum):
    value = int(text)
    if value < minimum:
        raise ValueError(f"{flag}: must be >= {minimum}: {text}")
    return value


def parse_args(argv):
    opts = {"iterations": 1, "warmup": 0}
    for i in range(0, len(argv), 2):
        flag, value = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if value is None:
            raise ValueError(f"{flag} needs a value")
        if flag in ("--users", "--password"):
            opts[flag[2:]] = value
        elif flag == "--id":
            opts["id"] = int(value)
        elif flag in ("--iterations", "--warmup"):
            opts[flag[2:]] = integer(flag, value, 1 if flag == "--iterations" else 0)
        else:
            raise ValueError(f"unknown argument {flag}")
    for name in ("users", "id", "password"):
        if name not in opts:
            raise ValueError(f"--{name} is required")
    return opts


def main(argv):
    try:
        o = parse_args(argv)
    except ValueError as e:
        sys.stderr.write(f"error {e}\n")
        return 2
    users_path, input_id, password = o["users"], o["id"], o["password"]
    clock = time.perf_counter_ns
    lines = []
    last = None
    for i in range(o["warmup"] + o["iterations"]):
        t0 = clock()
        with open(users_path, encoding="utf-8") as f:
            text = f.read()
        t1 = clock()
        users = json.loads(text)
        t2 = clock()
        user = next(filter(lambda u: u["id"] == input_id, users), None)
        t3 = clock()
        hash_str = hashlib.sha512(password.encode("utf-8")).hexdigest()
        t4 = clock()
        del users, text
        t5 = clock()
        # Checked outside the timed phases: every result is used.
        if user is None or user["id"] != input_id or (last is not None and hash_str != last):
            sys.stderr.write(f"error user {input_id} not found or an inconsistent result\n")
            return 2
        last = hash_str
        if i >= o["warmup"]:
            lines.append(f"phases {t1 - t0} {t2 - t1} {t3 - t2} {t4 - t3} {t5 - t4}")
    sys.stdout.write("\n".join([f"hash {last}", *lines]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

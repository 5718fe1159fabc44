"""Seed 000's processing step in Python: read user.json, json.load all of it, find the user by id
with next(filter(...)), SHA-512 hex of the password. Timed per iteration with perf_counter_ns."""

import hashlib
import json
import sys
import time


def authenticate(users_path, input_id, input_password):
    """One iteration, the article's code: the file is read and parsed on every call."""
    with open(users_path, encoding="utf-8") as f:
        users = json.load(f)
    user = next(filter(lambda u: u["id"] == input_id, users), None)
    if user is None:
        return None
    hash_str = hashlib.sha512(input_password.encode("utf-8")).hexdigest()
    return user, hash_str


USAGE = "usage: auth.py --users PATH --id N --password P [--iterations K] [--warmup W]"


class UsageError(Exception):
    pass


def integer(flag, text, minimum=None):
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{flag}: not an integer: {text}") from None
    if minimum is not None and value < minimum:
        raise UsageError(f"{flag}: must be >= {minimum}: {text}")
    return value


def parse_args(argv):
    # Flag/value pairs by hand (not argparse): a password such as "-x" must be taken as a value.
    opts = {"iterations": 1, "warmup": 0}
    for i in range(0, len(argv), 2):
        flag = argv[i]
        if i + 1 >= len(argv):
            raise UsageError(f"{flag} needs a value")
        value = argv[i + 1]
        if flag in ("--users", "--password"):
            opts[flag[2:]] = value
        elif flag == "--id":
            opts["id"] = integer(flag, value)
        elif flag == "--iterations":
            opts["iterations"] = integer(flag, value, 1)
        elif flag == "--warmup":
            opts["warmup"] = integer(flag, value, 0)
        else:
            raise UsageError(f"unknown argument {flag}")
    for name in ("users", "id", "password"):
        if name not in opts:
            raise UsageError(f"--{name} is required")
    return opts


def main(argv):
    try:
        args = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(f"error {e}; {USAGE}\n")
        return 2
    users_path, input_id, input_password = args["users"], args["id"], args["password"]
    warmup, iterations = args["warmup"], args["iterations"]
    times = []
    last = None
    for i in range(warmup + iterations):
        start = time.perf_counter_ns()
        result = authenticate(users_path, input_id, input_password)
        elapsed = time.perf_counter_ns() - start
        # Checked outside the timed part: every result is used.
        if result is None:
            sys.stderr.write(f"error user {input_id} not found\n")
            return 2
        user, hash_str = result
        if user["id"] != input_id or (last is not None and hash_str != last):
            sys.stderr.write("error inconsistent result\n")
            return 1
        last = hash_str
        if i >= warmup:
            times.append(elapsed)
    lines = [f"hash {last}"] + [f"ns {ns}" for ns in times]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as e:
        sys.stderr.write(f"error {e}\n")
        sys.exit(1)

#!/usr/bin/env python3
"""A dice agent speaking adk-eval-gate's command protocol; its first argument picks how it behaves."""

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "turns"
request = json.load(sys.stdin)
assert request["protocol"] == 1

if mode == "garbage":
    print("Traceback (most recent call last): this is not JSON")
    sys.exit(0)
if mode == "exit3":
    print("fatal: model quota exhausted", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    time.sleep(3600)
if mode == "error":
    print(json.dumps({"error": "the agent refused"}))
    sys.exit(0)
if mode == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if mode in ("flood", "huge"):  # endless output, or 50 MB in one turn
    chunk = "x" * (1024 * 1024)
    for _ in iter(int, 1) if mode == "flood" else range(50):
        sys.stdout.write(chunk)
    sys.exit(0)
if mode == "orphan":  # a child that outlives the command and holds its stdout open; its pid goes to argv[2]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(sys.argv[2], "a") as pids:
        pids.write(f"{child.pid}\n")


def answer(text):
    if m := re.search(r"roll an? (\d+)[ -]sided die", text.lower()):
        sides = int(m.group(1))
        return f"I rolled a {sides} sided die and got {random.Random(sides).randint(1, sides)}.", [
            {"name": "roll_die", "args": {"sides": sides}}
        ]
    return "I can roll dice and check whether numbers are prime.", []


turns = []
for turn in request["turns"]:
    text = " ".join(p.get("text", "") for p in turn["user_content"]["parts"])
    response, calls = answer(text)
    if mode == "events":
        events = [{"author": "dice", "content": {"role": "model", "parts": [{"functionCall": c}]}} for c in calls]
        events += [
            {
                "author": "dice",
                "content": {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": c["name"], "response": {"result": 1}}}],
                },
            }
            for c in calls
        ]
        events.append({"author": "dice", "content": {"role": "model", "parts": [{"text": response}]}})
        turns.append({"events": events})
    else:
        turns.append({"response": response, "tool_calls": calls})
print(json.dumps({"turns": turns}), flush=True)
if mode == "closed":  # the answer, then stdout closed and more written after it
    os.close(1)
    print("still talking after closing stdout", file=sys.stderr)
    with contextlib.suppress(OSError):
        os.write(1, b"more")

"""A command-protocol agent that puts its API key where our cuts fall. The question says how and where:
`refuse N` answers `{"error"}` with the key after N characters, `die N` prints it on its last stderr line after N
characters and exits 1, `flood N` prints one stderr line so long that the 64 KiB tail we keep starts N characters
into the key, `answer N` answers with it after N characters."""

from __future__ import annotations

import json
import os
import sys

request = json.load(sys.stdin)
mode, offset = request["turns"][0]["user_content"]["parts"][0]["text"].split()
key = os.environ["GOOGLE_API_KEY"]
placed = "x" * int(offset) + key + " and more words after it"
if mode == "refuse":
    print(json.dumps({"error": placed}))
elif mode == "die":
    print("an earlier line\n" + placed, file=sys.stderr)
    sys.exit(1)
elif mode == "flood":
    sys.stderr.write("x" * 100 + key + "y" * (64 * 1024 - len(key) + int(offset) - 1) + "\n")
    sys.exit(1)
else:
    print(json.dumps({"turns": [{"response": placed}]}))

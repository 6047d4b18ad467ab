#!/usr/bin/env python3
"""An independent reader of asciicast v2 files (the casts of `agentwire record --tty`), for
the terminal tests: written apart from agentwire's Rust code, with Python's json module and
pyte (a terminal emulator, Debian's python3-pyte) to play the output into a screen.

usage: cast.py CAST

Prints one JSON object: the header's version, width and height; the number of events of each
code ("o" output, "i" input, "m" markers); whether event times never go back; the marker
labels with their times; each input event with the screen it was typed into (time, data,
screen lines); the time of the last event; and the last screen as pyte renders it (its lines,
trailing spaces removed). Exits 1, naming the line, when a line is not JSON or not
an event `[time, code, data]`.
"""
import json
import sys

import pyte


def main():
    # Lines end at "\n" only: JSON strings may hold U+0085 or U+2028 unescaped, which
    # str.splitlines would also split at.
    lines = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
    header = json.loads(lines[0])
    screen = pyte.Screen(header["width"], header["height"])
    stream = pyte.Stream(screen)
    counts, markers, inputs, last, monotonic = {}, [], [], 0.0, True
    for n, line in enumerate(lines[1:], start=2):
        ev = json.loads(line)
        if not (isinstance(ev, list) and len(ev) == 3 and isinstance(ev[0], (int, float))
                and isinstance(ev[1], str) and isinstance(ev[2], str)):
            print(f"line {n} is not an event [time, code, data]: {line[:80]}", file=sys.stderr)
            sys.exit(1)
        t, code, data = ev
        counts[code] = counts.get(code, 0) + 1
        if code == "m":
            markers.append([t, data])
            continue
        if t < last:
            monotonic = False
        last = t
        if code == "o":
            stream.feed(data)
        elif code == "i":
            inputs.append([t, data, [l.rstrip() for l in screen.display]])
    print(json.dumps({
        "version": header.get("version"),
        "width": header["width"],
        "height": header["height"],
        "counts": counts,
        "monotonic": monotonic,
        "markers": markers,
        "inputs": inputs,
        "last_time": last,
        "screen": [l.rstrip() for l in screen.display],
    }))


main()

#!/usr/bin/env python3
"""The README side of scripts/results.sh.

    results_table.py replace NAME TABLE.md COMMIT
        Puts TABLE.md between README.md's `<!-- results:NAME -->` and
        `<!-- /results:NAME -->` markers, stamped with COMMIT.

    results_table.py compare NAME TABLE.md [TOLERANCE]
        Compares the peer ratios `(×k)` of a fresh run (TABLE.md) with those
        of README.md's table NAME, row by row (a row is workload, N and Q).
        Prints every ratio and how far it moved; exits 1 if one moved by
        more than TOLERANCE (default 0.15, i.e. 15%) either way, or if the
        two tables do not hold the same rows. For the `instructions` table
        the ratios compared are those of instructions per operation (a
        peer's count divided by maple's), not the one-repetition times.

Ratios, not times, are compared: on a shared virtual machine the same binary
runs up to twice as fast one hour as the next, but a peer's time divided by
maple's, each measured in its own process a few seconds apart, moves far less.
"""

import re
import sys

RATIO = re.compile(r"\(×([0-9.,]+)\)")


def markers(name):
    return f"<!-- results:{name} -->", f"<!-- /results:{name} -->"


def readme_table(name):
    begin, end = markers(name)
    readme = open("README.md").read()
    if begin not in readme or end not in readme:
        sys.exit(f"results.sh: README.md has no {begin} ... {end} markers")
    head, rest = readme.split(begin, 1)
    body, tail = rest.split(end, 1)
    return head, body, tail


def replace(name, path, commit):
    head, _, tail = readme_table(name)
    begin, end = markers(name)
    table = open(path).read().strip()
    body = f"{begin}\n<!-- measured at {commit} by scripts/results.sh -->\n\n{table}\n\n{end}"
    open("README.md", "w").write(head + body + tail)


def rows(markdown):
    """The header and then each row of the first table in `markdown`, as
    lists of stripped cells."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    if len(lines) < 3:
        sys.exit("results.sh: no table found")
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    yield header
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(header):
            return  # the next table
        yield cells


def ratios(markdown):
    """{(workload, N, Q): {peer: ratio}} from the first table in `markdown`."""
    table = rows(markdown)
    header = [column.split()[0] for column in next(table)]
    out = {}
    for cells in table:
        found = {}
        for peer, cell in zip(header, cells):
            match = RATIO.search(cell)
            if match:
                found[peer] = float(match.group(1).replace(",", ""))
        out[tuple(cells[:3])] = found
    return out


INSTRUCTIONS = re.compile(r"([0-9.,]+) ins")


def instruction_ratios(markdown):
    """{(workload, N, Q): {peer: peer's instructions / maple's}} from the
    first table in `markdown` (cells such as `329.3 (×6.54); 3623.2 ins`)."""
    table = rows(markdown)
    header = [column.split()[0] for column in next(table)]
    out = {}
    for cells in table:
        counts = {}
        for column, cell in zip(header, cells):
            match = INSTRUCTIONS.search(cell)
            if match:
                counts[column] = float(match.group(1).replace(",", ""))
        own = counts.pop("maple", None)
        out[tuple(cells[:3])] = {peer: n / own for peer, n in counts.items()} if own else {}
    return out


def compare(name, path, tolerance):
    _, body, _ = readme_table(name)
    parse = instruction_ratios if name == "instructions" else ratios
    before, after = parse(body), parse(open(path).read())
    if before.keys() != after.keys():
        missing = sorted(before.keys() ^ after.keys())
        sys.exit(f"results.sh: the two tables differ in rows: {missing}")
    worst, failed = 0.0, []
    print(f"{'workload':<12} {'N':>8} {'Q':>9} {'peer':<13} {'README':>8} {'rerun':>8} {'moved':>7}")
    for key, peers in before.items():
        for peer, old in peers.items():
            new = after[key].get(peer)
            if new is None:
                failed.append((key, peer, "missing in the rerun"))
                continue
            moved = new / old - 1
            worst = max(worst, abs(moved))
            flag = "  <-- over" if abs(moved) > tolerance else ""
            print(f"{key[0]:<12} {key[1]:>8} {key[2]:>9} {peer:<13} {old:>8.2f} {new:>8.2f} {moved:>+7.1%}{flag}")
            if abs(moved) > tolerance:
                failed.append((key, peer, f"{old} -> {new}"))
    print(f"largest change of a ratio: {worst:.1%} (tolerance {tolerance:.0%})")
    if failed:
        print(f"results.sh: {len(failed)} ratios moved by more than {tolerance:.0%}", file=sys.stderr)
        sys.exit(1)


def main(argv):
    if len(argv) >= 4 and argv[0] == "replace":
        replace(argv[1], argv[2], argv[3])
    elif len(argv) in (3, 4) and argv[0] == "compare":
        compare(argv[1], argv[2], float(argv[3]) if len(argv) == 4 else 0.15)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

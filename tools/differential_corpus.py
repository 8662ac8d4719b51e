"""The differential corpus against urdfdom: write it, record urdfdom's verdicts, compare ours.

The corpus (test/lenient_corpus.py) is descriptions with one oddity each. urdfdom is not on
PyPI: its verdicts come from a program you build yourself beside the project from urdfdom's and
TinyXML2's sources, which reads each file with `urdf::parseURDF` and prints one JSON line per
file and TinyXML2 version:

    {"file": PATH, "tinyxml2": "10.0.0", "loaded": true, "robot": NAME, "links": [...],
     "joints": [{"name", "type", "parent", "child", "xyz": [3], "quat": [x, y, z, w]}, ...]}

    python tools/differential_corpus.py write DIR [NAME=URDF ...]   # the cases, one file each
    (run the oracle on DIR/*.urdf) > RESULTS.jsonl
    python tools/differential_corpus.py compare RESULTS.jsonl [NAME=URDF ...]   # the table
    python tools/differential_corpus.py record RESULTS.jsonl  # fixtures/urdfdom_verdicts.json

NAME=URDF adds (or, with a bundled name, replaces) a base description, for a corpus of robots
that the repository does not hold; `record` takes only the bundled bases, which the tests
regenerate. The table says, per kind, how many cases urdfdom loads with any TinyXML2 version,
how many this package loads, and how many agree in verdict and, where both load, in robot
name, links and every joint's parent, child, type and origin.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
import json
import math
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'test'))
import lenient_corpus  # noqa: E402  (test support, beside the tests that use it)


def file_name(case: str) -> str:
    return case.replace('/', '__') + '.urdf'


def read_results(path: Path) -> dict[str, dict[str, dict]]:
    """The oracle's lines by case id, then by TinyXML2 version."""
    results: dict[str, dict[str, dict]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        if line.strip():
            result = json.loads(line)
            case = Path(result['file']).name.removesuffix('.urdf').replace('__', '/')
            results[case][result['tinyxml2']] = result
    return results


def bases_of(arguments: list[str]) -> dict[str, Path]:
    bases = dict(lenient_corpus.BASES)
    for argument in arguments:
        name, _, path = argument.partition('=')
        bases[name] = Path(path)
    return bases


def write(directory: Path, bases: dict[str, Path]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    corpus = lenient_corpus.cases(bases)
    for case, text in corpus.items():
        (directory / file_name(case)).write_bytes(text.encode('utf-8', 'surrogatepass'))
    print(f'{len(corpus)} cases in {directory}')


def compare(results: dict[str, dict[str, dict]], bases: dict[str, Path]) -> int:
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    disagreements = []
    for case, text in lenient_corpus.cases(bases).items():
        kind = case.split('/')[1]
        by_version = results.get(case)
        if not by_version:
            disagreements.append(f'{case}: no oracle result')
            continue
        loaded = [r for _, r in sorted(by_version.items()) if r['loaded']]
        ours = lenient_corpus.our_tree(text)
        row = rows[kind]
        row[0] += 1
        row[1] += bool(loaded)
        row[2] += ours is not None
        agree = bool(loaded) == (ours is not None)
        if agree and (not loaded
                      or lenient_corpus.same_tree(ours, lenient_corpus.tree(loaded[-1]))):
            row[3] += 1
        else:
            versions = ','.join(v for v, r in sorted(by_version.items()) if r['loaded']) or 'none'
            disagreements.append(f'{case}: urdfdom loads with TinyXML2 {versions}; this package '
                                 f'{"loads" if ours else "refuses"}')
    print(f'{"kind":40} {"cases":>5} {"urdfdom loads":>13} {"we load":>7} {"agree":>5}')
    for kind in sorted(rows):
        print(f'{kind:40} {rows[kind][0]:5} {rows[kind][1]:13} {rows[kind][2]:7} '
              f'{rows[kind][3]:5}')
    total = [sum(row[i] for row in rows.values()) for i in range(4)]
    print(f'{"all":40} {total[0]:5} {total[1]:13} {total[2]:7} {total[3]:5}')
    for line in disagreements:
        print('disagrees:', line)
    return 0 if not disagreements else 1


def record(results: dict[str, dict[str, dict]]) -> None:
    """Record urdfdom's verdict on each case of the bundled bases, and each tree it loads, once."""
    cases: dict[str, dict] = {}
    trees: dict[str, dict] = {}
    for case, text in lenient_corpus.cases().items():
        by_version = results[case]
        loaded = {version: result['loaded'] for version, result in sorted(by_version.items())}
        entry = {'digest': lenient_corpus.digest(text), 'loaded': loaded, 'tree': None}
        loading = [r for _, r in sorted(by_version.items()) if r['loaded']]
        if loading:
            seen = lenient_corpus.tree(loading[-1])
            key = lenient_corpus.digest(json.dumps(seen, sort_keys=True))
            trees.setdefault(key, seen)
            entry['tree'] = key
        cases[case] = entry
    for seen in trees.values():
        for joint in seen['joints'].values():
            if not all(map(math.isfinite, joint[3] + joint[4])):
                raise SystemExit('a non-finite origin: not a tree to record')
    lenient_corpus.VERDICTS.write_text(json.dumps(
        {'cases': cases, 'trees': trees}, indent=1, sort_keys=True) + '\n')
    print(f'{len(cases)} verdicts, {len(trees)} trees in {lenient_corpus.VERDICTS}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('command', choices=['write', 'compare', 'record'])
    parser.add_argument('path', type=Path, help='the folder to write, or the oracle results')
    parser.add_argument('bases', nargs='*', metavar='NAME=URDF', help='more base descriptions')
    args = parser.parse_args()
    if args.command == 'write':
        write(args.path, bases_of(args.bases))
        return 0
    results = read_results(args.path)
    if args.command == 'compare':
        return compare(results, bases_of(args.bases))
    record(results)
    return 0


if __name__ == '__main__':
    sys.exit(main())

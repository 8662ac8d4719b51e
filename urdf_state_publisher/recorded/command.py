"""urdf_state_publisher_bag: a recorded bag's robot state, as the node would have published it.

    urdf_state_publisher_bag INPUT [INPUT ...] OUTPUT [--description FILE [NAME:=VALUE ...]]
        [--overwrite] [--strict] [--findings FILE] [--jobs N] [--cluster ADDRESS]
        [--storage mcap|sqlite3] [--distro DISTRO] [--compression none|message|file]
        [--ros-args -p NAME:=VALUE --params-file FILE -r FROM:=TO ...]

It reads a recording (a rosbag2 bag: a directory, sqlite3 or MCAP, or a lone .mcap or .db3 file; a
ROS 1 bag: a .bag file or the files of a split recording) and writes a new bag: everything in
the input, plus what urdf_state_publisher would have published had it run while the bag was
recorded, each message at the log time of the one that made the node publish it. The work is
the node's own engine (engine/state_engine.py), fed the bag's bytes in log-time order with the
bag's log
time as its clock: the /tf messages are the node's, byte for byte. One run is a plain function
(recorded.run.run_bag); this module is its command line, and runs several at once:

- Several INPUTs, or one folder of recordings, go to the folder OUTPUT, one output each (named
  after its input), on a pool of processes (--jobs, default every core), each streaming its own
  recording, the longest first; or, with --cluster (or DASK_SCHEDULER_ADDRESS), on the workers
  of a Dask cluster (recorded.cluster). A batch keeps OUTPUT/runs.csv as its runs finish, and run
  again does only the runs whose outputs are not complete (recorded.table). The batch's progress
  from its first second (runs done, running and left, throughput: recorded.progress) on stderr; a
  table at the end. A lone run with a core to spare has a second process copy the recording
  and write the output, from before the run has loaded its engine (recorded.writer).
- The exit status (also in --help; the numbers are exit_status's, shared with inspect): 0
  written and /tf computed; 1 bad input or an error, nothing written; 2 written, but the
  description and the recording do not fit (no /tf, or moving joints the recording never
  names); 3 with --strict, written but the node would have warned; for a batch, the worst of
  its runs (1, then 2, then 3); 64 a usage error, nothing done. Interrupted (Ctrl-C): ended
  by SIGINT, as an interrupted program is; stopped by SIGTERM or SIGHUP (a scheduler, a
  closed terminal), the same clean-up, then ended by that signal.
- What the node would have reported is condensed on the terminal (a few names per finding,
  the rest counted); `--findings FILE` writes every run's summary, each finding whole, as
  JSON for a script.
- The node's parameters and remaps come from `--ros-args`, as for the node (engine.ros_arguments).
- The description: `--description FILE` (URDF or xacro, with xacro arguments), else the
  parameters' (robot_description, description_file), else the bag's robot_description topic.
- /tf and /tf_static of the input: a transform whose child frame the active description
  publishes, or a recorded description that the given one replaces published (its leading
  slash, ROS 1's, aside), is dropped, the computed one replacing it; all others are kept, named
  as tf2 reads them (recorded.frames). The node's own recorded statuses on /diagnostics are
  replaced too (an output processed again). Everything else is copied.
- The output is written under a temporary name beside OUTPUT and renamed when complete; an
  error or Ctrl-C leaves nothing. The input is never written to: an output that is the input,
  holds it or is inside it is refused. rosbags, an optional dependency, is imported only when
  the command runs, so that it can say how to install it.
"""

from __future__ import annotations

import argparse
from contextlib import suppress
from dataclasses import asdict, replace
import json
import os
from pathlib import Path
import signal
import sys
import threading
import time
from typing import Any, TYPE_CHECKING

from urdf_state_publisher.cli import end_by
from urdf_state_publisher.exit_status import ArgumentParser, USAGE
from urdf_state_publisher.recorded.cluster import cluster_address, run_on_cluster
from urdf_state_publisher.recorded.extras import install_command, this_python
from urdf_state_publisher.recorded.folders import (
    FolderContents,
    is_rosbag2_folder,
    output_name,
    Recording,
    SplitRecording,
)
from urdf_state_publisher.recorded.input import (
    BagInputError,
    folder_of_recordings,
    recording_bytes,
)
from urdf_state_publisher.recorded.output import COMPRESSIONS, DISTROS
from urdf_state_publisher.recorded.plan import BagError, check_paths
from urdf_state_publisher.recorded.progress import BatchProgress, BatchState, PROGRESS_PERIOD_S
from urdf_state_publisher.recorded.run import (
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNFIT,
    run_bag,
    RunOptions,
    RunSummary,
)
from urdf_state_publisher.recorded.stops import (
    done,
    reset,
    stop,
    stopped_after_done,
    stops_deferred,
)
from urdf_state_publisher.recorded.table import recorded_run, RunRecord, RunsTable, this_worker
from urdf_state_publisher.stop_signals import STOP_SIGNALS
from urdf_state_publisher.words import counted

if TYPE_CHECKING:
    from collections.abc import Iterable
    from concurrent.futures import Future

__all__ = ['main']

PROGRAM = 'urdf_state_publisher_bag'
EXIT_STATUS = (f'exit status: {EXIT_OK} the output was written and /tf computed; '
               f'{EXIT_FAILED} bad input or an error, nothing written; {EXIT_UNFIT} written, '
               'but the description and the recording do not fit (no /tf at all, or moving '
               f'joints the recording never names); {EXIT_FINDINGS} with --strict, written, '
               'but the node would have warned; several inputs: the worst of their runs, in '
               f'that order ({EXIT_FAILED}, {EXIT_UNFIT}, {EXIT_FINDINGS}); {USAGE} a usage '
               'error, nothing done. Interrupted: ended by SIGINT (SIGTERM, SIGHUP: by that '
               'signal), nothing written but the outputs of the runs done before it.')
# A batch's worst status first: an error, then a misfit, then findings.
_SEVERITY = (EXIT_FAILED, EXIT_UNFIT, EXIT_FINDINGS, EXIT_OK)
# A finding's names shown on the terminal; the rest are counted (all in --findings FILE).
NAMES_SHOWN = 3
# Inputs that are robot descriptions, not recordings: given where --description was meant.
DESCRIPTION_SUFFIXES = ('.urdf', '.xacro')


def main(argv: list[str] | None = None) -> int:
    """Run the command; the exit status as EXIT_STATUS says.

    A stop (Ctrl-C, SIGTERM, SIGHUP) ends the process by its signal. After an error or a stop
    nothing is left behind, but the outputs of the runs done before it. The signals' handlers
    are this call's: the caller's come back when it returns.
    """
    reset()
    stopped_by, previous = _stop_signals_interrupt()
    try:
        return _main(sys.argv[1:] if argv is None else argv, stopped_by)
    except KeyboardInterrupt:  # a stop before any run began: nothing to clean up, or say
        end_by(stopped_by[0] if stopped_by else signal.SIGINT)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _main(argv: list[str], stopped_by: list[int]) -> int:
    own, ros_args = _split_ros_args(argv)
    parser = _parser()
    with stops_deferred():  # argparse's intermixed parsing, cut, leaves its parser broken
        args = parser.parse_intermixed_args(_description_words(own))
    try:
        import rosbags  # noqa: F401 - asked for here to say how to install it
    except ImportError:
        print(f'{PROGRAM}: needs the rosbags package, which ROS 2 packages do not ship; for '
              f'this Python: {install_command(*this_python())} (doc/recorded-data.md, '
              '"Installing rosbags")', file=sys.stderr)
        return EXIT_FAILED
    options = RunOptions(
        description=(args.description, *args.xacro_args) if args.description else (),
        overwrite=args.overwrite, storage=args.storage, distro=args.distro,
        compression=args.compression, strict=args.strict, ros_args=tuple(ros_args))
    inputs, output, findings = args.inputs, args.output, args.findings
    try:
        if not inputs:
            parser.error('give an INPUT and an OUTPUT')
        _check_findings_file(findings)
        runs, folder = _runs(inputs, output)
    except BagInputError as error:
        print(f'{PROGRAM}: {error}', file=sys.stderr)
        return EXIT_FAILED
    jobs = args.jobs or os.cpu_count() or 1
    try:
        if runs is None:
            # A lone run with a core to spare: a second process copies and writes.
            summary = run_bag(inputs[0], output, replace(options, writer_process=jobs > 1))
            _print_summary(summary, findings)
            _print_folder_notes(folder)
            written = _write_findings(findings, [summary])
            if stopped_after_done():
                raise KeyboardInterrupt(f'the output was written before it: {summary.output}')
            return summary.status if written else EXIT_FAILED
        return _run_batch(runs, output, replace(options, live=False), jobs, stopped_by, findings,
                          folder, cluster_address(args.cluster))
    except KeyboardInterrupt as stopped:
        with stops_deferred():  # a second stop: the process ends by the first, after this line
            number = stopped_by[0] if stopped_by else signal.SIGINT
            how = ('interrupted' if number == signal.SIGINT
                   else f'stopped by {signal.Signals(number).name}')
            print(f'{PROGRAM}: {how}; {str(stopped) or "no output written"}', file=sys.stderr,
                  flush=True)
            end_by(number)


def _stop_signals_interrupt() -> tuple[list[int], dict[int, Any]]:
    """SIGTERM and SIGHUP stop the command as Ctrl-C does: a KeyboardInterrupt, its clean-up.

    A scheduler or a container runtime stops a job with SIGTERM, a closed terminal sends SIGHUP:
    without this, either would end the process at once and leave its output's staging folder
    behind. None of the three cuts a clean-up under way (recorded.stops). A signal ignored when the
    command started (`nohup` ignores SIGHUP) stays ignored. Called from a thread other than the
    main one, where Python sets no handler, it leaves them all as they are. The list returned
    gets the first such signal received; the dict holds the handlers replaced.
    """
    received: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return received, previous

    def interrupt(number: int, frame: object) -> None:
        if not received:
            received.append(number)
        stop()  # not in the middle of a clean-up (recorded.stops)

    for number in STOP_SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, interrupt)
    return received, previous


def _split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command's own arguments, and the --ros-args (up to a `--`; its own go on after)."""
    words = list(argv)
    if '--ros-args' not in words:
        return words, []
    start = words.index('--ros-args')
    end = words.index('--', start) if '--' in words[start:] else len(words)
    return words[:start] + words[end + 1:], words[start + 1:end]


def _description_words(words: list[str]) -> list[str]:
    """`--description FILE NAME:=VALUE ...` as argparse takes it, wherever it stands.

    The xacro arguments are the words of the form NAME:=VALUE after FILE; every other word is
    the command's, so that `--description robot.urdf in/ out/` reads as a user means it.
    """
    result = []
    words = iter(words)
    for word in words:
        result.append(word)
        if word == '--description':
            path = next(words, None)
            if path is None:
                break
            result.append(path)
            for following in words:
                if ':=' in following and not following.startswith('-'):
                    result += ['--xacro-arg', following]
                else:
                    result.append(following)
                    break
    return result


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROGRAM, description="A bag's /tf, /tf_static and robot state computed as "
        'urdf_state_publisher would have published them live; everything else copied.',
        epilog="--ros-args ... after the rest: the node's parameters (-p NAME:=VALUE, "
        '--params-file FILE) and remaps (-r FROM:=TO, -r __ns:=/robot, -r __node:=NAME), '
        'as for the node. ' + EXIT_STATUS)
    parser.add_argument('inputs', nargs='+', type=Path, metavar='INPUT',
                        help='the recording (a rosbag2 bag directory or an .mcap file; a ROS 1 '
                             '.bag file, or a folder of the .bag files of a split recording); '
                             'several recordings, or a folder of them')
    parser.add_argument('output', type=Path, metavar='OUTPUT',
                        help='the bag to write; for several recordings, the folder to write '
                             'their outputs in')
    parser.add_argument('--description', metavar='FILE',
                        help='the robot description to use (.urdf, or .xacro followed by its '
                             "NAME:=VALUE arguments) instead of the bag's robot_description")
    parser.add_argument('--xacro-arg', dest='xacro_args', action='append', default=[],
                        help=argparse.SUPPRESS)
    parser.add_argument('--overwrite', action='store_true',
                        help='replace an output that exists, once the new one is complete '
                             '(never the input)')
    parser.add_argument('--strict', action='store_true',
                        help=f'exit with status {EXIT_FINDINGS} when the node would have '
                             'warned (clamped, NaN, unknown joints, a misspelt parameter, ...), '
                             'for CI over recordings')
    parser.add_argument('--findings', type=Path, metavar='FILE',
                        help="write each run's summary, with every finding and every name in "
                             'it, to FILE as JSON (the terminal shows a few names a finding)')
    parser.add_argument('--jobs', type=_processes, metavar='N',
                        help='processes at once (default: every core): several inputs '
                             'run N at a time; a lone one, with N above 1, copies the '
                             'recording and writes its output from a second process')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'),
                        help="the output's storage (default: the input's; sqlite3 for ROS 1)")
    parser.add_argument('--cluster', metavar='ADDRESS',
                        help='several inputs: run them on the workers of the Dask scheduler at '
                             'ADDRESS (tcp://host:8786; default: $DASK_SCHEDULER_ADDRESS, '
                             'else this machine), inputs and outputs on a filesystem they share')
    parser.add_argument('--distro', choices=DISTROS,
                        help="the distro whose ros2 bag will play the output (default: the "
                             "input's; humble, which every distro plays, for ROS 1)")
    parser.add_argument('--compression', choices=COMPRESSIONS,
                        help="the output's zstd compression, each message or each file, "
                             "as ros2 bag record compresses (default: the input's; none for "
                             "ROS 1)")
    return parser


def _processes(text: str) -> int:
    """--jobs N: a whole number of processes, 1 or more."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'give a whole number of processes, not {text!r}'
                                         ) from None
    if number < 1:
        raise argparse.ArgumentTypeError(f'give 1 or more processes, not {number}')
    return number


def _runs(inputs: list[Path], output: Path
          ) -> tuple[list[tuple[Recording, Path]] | None, FolderContents | None]:
    """Each run's input and output for a batch, and the folder given as the only input.

    The runs are None for one recording into one bag; the folder's notes end the summary.
    """
    for path in inputs:
        if path.suffix in DESCRIPTION_SUFFIXES and path.is_file():
            raise BagInputError(f'{path} is a robot description, not a recording: give it '
                                f'with --description {path}')
    folder = None
    if len(inputs) == 1:
        if not inputs[0].is_dir() or is_rosbag2_folder(inputs[0]):
            return None, None
        folder = folder_of_recordings(inputs[0])
        if folder.whole:
            return None, folder
        try:  # the outputs are not written in the folder read, nor around it
            check_paths(inputs[0], output, overwrite=True)
        except BagError as error:
            raise BagInputError(str(error)) from None
    recordings: list[Recording] = list(folder.recordings) if folder else list(inputs)
    names = [output_name(recording) for recording in recordings]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BagInputError(f'several inputs would write {output / repeated[0]}: give '
                            'recordings of different names')
    return [(recording, output / name) for recording, name in zip(recordings, names)], folder


def _print_folder_notes(folder: FolderContents | None) -> None:
    """How the folder given was read: its split recordings, and what in it was not read."""
    if folder is None:
        return
    lines = []
    for recording in folder.recordings:
        if isinstance(recording, SplitRecording):
            missing = (f'; without piece {", ".join(map(str, recording.missing))}, which is '
                       'not there' if recording.missing else '')
            lines.append(f'{recording.name}: {len(recording.pieces)} pieces of one recording '
                         f'split by rosbag record --split, read as one ({recording.pieces[0].name}'
                         f' ... {recording.pieces[-1].name}){missing}')
    lines += [f'{entry.name}: not read: {entry.why}' for entry in folder.not_read]
    if lines:
        print('\n'.join(lines))


# One recording ---------------------------------------------------------------------------

def _seconds(seconds: float) -> str:
    return f'{seconds * 1000:.0f} ms' if seconds < 1 else f'{seconds:.1f} s'


def _print_summary(summary: RunSummary, findings_file: Path | None) -> None:
    """The run's summary; each finding with its first NAMES_SHOWN names, the rest counted."""
    if summary.error is not None:
        print(f'{PROGRAM}: {summary.error}', file=sys.stderr)
        return
    speed = summary.bag_seconds / max(summary.elapsed, 1e-3)
    lines = [
        f'read {summary.messages:,} messages ({summary.bag_seconds:.1f} s of bag) in '
        f'{_seconds(summary.elapsed)}, {speed:.0f}x real time',
        'wrote ' + ', '.join(f'{topic} {count:,}' for topic, count in summary.written.items()),
        *_thinned(summary),
        f'recorded transforms: {summary.replaced_transforms:,} replaced (their child frames '
        f"are this description's), {summary.kept_transforms:,} kept",
    ]
    if summary.replaced_messages:
        lines.append('recorded messages replaced by what the run wrote: ' + ', '.join(
            f'{topic} {count:,}' for topic, count in summary.replaced_messages.items()))
    if summary.findings:
        lines.append('findings (what the node would have reported), at the bag time of the '
                     'message that caused them:')
        for finding in summary.findings:
            times = f', {finding.count} times' if finding.count > 1 else ''
            lines.append(f'  [{finding.level}] first at {finding.first:.3f} s{times}: '
                         f'{finding.text}')
            for name in finding.names[:NAMES_SHOWN]:
                lines.append(f'      {name.name}: {counted(name.count, "message")}, first at '
                             f'{name.first:.3f} s, last at {name.last:.3f} s')
            more = len(finding.names) - NAMES_SHOWN
            if more > 0:
                where = (f'each in {findings_file}' if findings_file is not None
                         else '--findings FILE lists each')
                lines.append(f'      ... and {more:,} more name{"s" if more > 1 else ""} '
                             f'({where})')
    else:
        lines.append('findings: none')
    if summary.unfit is not None:
        lines.append(f'the description and the recording do not fit: {summary.unfit}')
    lines.append(f'output: {summary.output}')
    print('\n'.join(lines))


def _thinned(summary: RunSummary) -> list[str]:
    """A line when publish_frequency kept JointStates from /tf, with how to have them all."""
    if not summary.rate_limited:
        return []
    tf = sum(count for topic, count in summary.written.items() if topic.endswith('/tf'))
    frequency = f'{summary.publish_frequency:g}'
    return [f'/tf {tf:,} from {summary.joint_states:,} JointStates: publish_frequency '
            f'({frequency} Hz) publishes each joint at most {frequency} times a second of '
            'their stamps; for one /tf per JointState: --ros-args -p ignore_timestamp:=true']


# The findings file -----------------------------------------------------------------------

def _check_findings_file(path: Path | None) -> None:
    """Refuse, before any run, a --findings FILE that cannot be written where it is to go."""
    if path is None:
        return
    if path.is_dir():
        raise BagInputError(f'--findings {path}: a folder; give the file to write')
    if not path.parent.is_dir():
        raise BagInputError(f'--findings {path}: no folder {path.parent}; give a file in a '
                            'folder that exists')


def _write_findings(path: Path | None, summaries: list[RunSummary]) -> bool:
    """Write --findings FILE: the command's status and each run's summary whole, as JSON.

    One object a run (RunSummary's fields), in the order of the inputs. False, after one line,
    if it cannot be written.
    """
    if path is None:
        return True
    document = {'status': _worst(summaries), 'runs': [asdict(s) for s in summaries]}
    try:
        path.write_text(json.dumps(document, indent=1) + '\n', encoding='utf-8')
    except OSError as error:
        print(f'{PROGRAM}: --findings {path}: cannot write it ({error.strerror or error})',
              file=sys.stderr)
        return False
    return True


def _worst(summaries: list[RunSummary]) -> int:
    """The command's status: its runs' worst (_SEVERITY)."""
    return next(status for status in _SEVERITY
                if status == EXIT_OK or any(s.status == status for s in summaries))


# Several recordings ----------------------------------------------------------------------

def _run_batch(runs: list[tuple[Recording, Path]], output: Path, options: RunOptions,
               jobs: int, stopped_by: list[int], findings_file: Path | None,
               folder: FolderContents | None, cluster: str | None) -> int:
    """Every run not done before, on a pool of `jobs` processes or a Dask cluster.

    `cluster`: the Dask scheduler's address, or None. OUTPUT/runs.csv (recorded.table) is kept as
    runs report; then the table, and the worst status.

    `stopped_by` gets the signal, other than SIGINT, that stops the command.
    `findings_file`: --findings FILE, written once every run is done. `folder`: the folder
    given as the only input, whose notes follow the table.
    """
    started = time.monotonic()
    table = RunsTable(output)
    to_do, summaries = table.runs_to_do(runs, options.overwrite)
    if cluster is not None and to_do:
        try:
            summaries |= run_on_cluster(cluster, runs, to_do, options, table)
        except BagInputError as error:  # no distributed, no scheduler: nothing run
            print(f'{PROGRAM}: {error}', file=sys.stderr)
            return EXIT_FAILED
    elif to_do:
        summaries |= _run_on_pool(runs, to_do, options, jobs, stopped_by, table)
    else:
        table.write()  # a batch done before: its table as it was
    ordered = [summaries[k] for k in range(len(runs))]
    _print_table(ordered, [target.name for _, target in runs], time.monotonic() - started)
    _print_folder_notes(folder)
    written = _write_findings(findings_file, ordered)
    if stopped_after_done():
        raise KeyboardInterrupt(f'{sum(s.output is not None for s in ordered)} of {len(runs)} '
                                'outputs written before it')
    return _worst(ordered) if written else EXIT_FAILED


def _run_on_pool(runs: list[tuple[Recording, Path]], to_do: list[int], options: RunOptions,
                 jobs: int, stopped_by: list[int], table: RunsTable) -> dict[int, RunSummary]:
    """Runs `to_do` of `runs` on a pool of `jobs` processes; their summaries, by index."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait  # a batch's only
    import multiprocessing

    started = time.monotonic()
    terminal = sys.stderr.isatty()
    # The width matters only where the line is redrawn: on a terminal.
    progress = BatchProgress(sys.stderr, terminal, started,
                             os.get_terminal_size(sys.stderr.fileno()).columns if terminal else 0)
    summaries: dict[int, RunSummary] = {}
    workers = max(1, min(jobs, len(to_do)))
    # The platform's way to start a worker (on Linux a fork, whose worker has this process's
    # imports; from Python 3.14 a fork server's, which imports them once more); a run shares
    # nothing with this process that it changes.
    stopping = multiprocessing.Event()
    with ProcessPoolExecutor(max_workers=workers,
                             initializer=_start_worker, initargs=(stopping,)) as pool:
        # The longest runs first: one started last would finish alone, on one core, after the
        # others (a fleet's runs differ in length a hundredfold).
        longest_first = sorted(to_do, key=lambda k: -recording_bytes(runs[k][0]))
        futures = {pool.submit(_batch_run, *runs[k], options): k for k in longest_first}
        try:
            pending = set(futures)
            while pending:
                progress.show(_batch_state(len(to_do), summaries, pending, workers),
                              time.monotonic())
                finished, pending = wait(pending, timeout=PROGRESS_PERIOD_S,
                                         return_when=FIRST_COMPLETED)
                for future in finished:
                    record = future.result()
                    if record is None:  # not run: a worker was stopped (its own signal)
                        raise KeyboardInterrupt
                    table.record(runs[futures[future]][1], record)
                    summaries[futures[future]] = record.summary
            progress.show(_batch_state(len(to_do), summaries, pending, workers),
                          time.monotonic())
            done()  # every run has reported: a stop from here on ends the batch after its table
        except KeyboardInterrupt:
            stopping.set()
            progress.clear()  # the line that says why comes next
            # A second stop while the workers clean up is this one (recorded.stops).
            with suppress(KeyboardInterrupt), stops_deferred():
                # Ctrl-C reaches the workers too (the terminal's process group); a signal sent
                # to this process alone is passed on, so that each run stops and cleans up now
                # (a run already stopping takes the second as part of the first).
                for worker in multiprocessing.active_children():
                    os.kill(worker.pid, stopped_by[0] if stopped_by else signal.SIGINT)
                pool.shutdown(wait=True, cancel_futures=True)
                for future, k in futures.items():  # those done as the stop came: in the table
                    if k not in summaries and _output_written(future):
                        table.record(runs[k][1], future.result())
            # The runs done before the stop keep their outputs: whole, and hours of work.
            written = len(runs) - len(to_do) + _outputs_written(futures)
            raise KeyboardInterrupt(f'{written} of {len(runs)} outputs written before it; the '
                                    'runs not done left nothing') from None
    progress.clear()
    return summaries


def _batch_state(total: int, summaries: dict[int, RunSummary], pending: set[Future],
                 workers: int) -> BatchState:
    """A batch's runs by state, from its summaries so far and its futures not done.

    The pool marks running the runs it has handed to its workers' queue, which holds one more
    than there are workers: at most `workers` of them run.
    """
    return BatchState(
        total=total, done=len(summaries),
        running=min(workers, sum(1 for future in pending if future.running())),
        not_ok=sum(s.status != EXIT_OK for s in summaries.values()),
        recorded_seconds=sum(s.bag_seconds for s in summaries.values()))


def _outputs_written(futures: Iterable[Future]) -> int:
    """How many of a batch's runs have their output in place.

    A run whose output had moved in returns its record, whenever a stop came (recorded.stops); one
    stopped, cancelled, not started or failed has none.
    """
    return sum(1 for future in futures if _output_written(future))


def _output_written(future: Future) -> bool:
    """Whether a batch run's output is in place (_outputs_written)."""
    return (future.done() and not future.cancelled() and future.exception() is None
            and future.result() is not None and future.result().summary.output is not None)


# In a batch's worker process: the batch's event, set once it is stopped, so that no further run
# starts (the pool hands a worker its next run before the last one ends, and cancels only the
# rest); whether a stop signal came to this worker; whether a run is under way.
_stopping: Any = None
_worker_stopped = False
_in_run = False


def _start_worker(stopping: Any) -> None:
    """A batch worker's start: a stop signal interrupts its run, and only a run.

    Between two runs there is nothing to clean up, and an interrupt there would end the worker
    with a traceback (and the pool as broken): the signal is only noted, and no run starts.
    """
    global _stopping
    _stopping = stopping

    def stop_run(number: int, frame: object) -> None:
        global _worker_stopped
        _worker_stopped = True  # a plain flag: the event's lock may be held where this lands
        if _in_run:
            stop()

    for number in STOP_SIGNALS:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, stop_run)


def _batch_run(source: Recording, target: Path, options: RunOptions) -> RunRecord | None:
    """A batch's run in a worker; None if the batch was stopped before it started."""
    global _in_run
    _in_run = True  # first: a signal from here on interrupts, one before it was noted
    try:
        if _worker_stopped or _stopping.is_set():
            return None
        return recorded_run(source, target, options, this_worker())
    except KeyboardInterrupt:
        _stopping.set()  # before the worker takes its next run, whatever the others heard
        raise
    finally:
        _in_run = False


_STATUS_NAMES = {EXIT_OK: 'ok', EXIT_FAILED: 'failed', EXIT_UNFIT: 'does not fit',
                 EXIT_FINDINGS: 'findings'}


def _print_table(summaries: list[RunSummary], names: list[str], elapsed: float) -> None:
    """The batch's table; each run named as its output in the batch's folder is."""
    width = max(len(name) for name in names)
    lines = [f'{"run":<{width}}  {"messages":>10}  {"/tf":>9}  {"findings":>8}  status']
    for name, s in zip(names, summaries):
        tf = sum(count for topic, count in (s.written or {}).items()
                 if topic.endswith('/tf'))
        lines.append(f'{name:<{width}}  {s.messages:>10,}  {tf:>9,}  '
                     f'{len(s.findings):>8}  {_STATUS_NAMES[s.status]}')
    for name, s in zip(names, summaries):
        why = s.error or s.unfit
        if why:
            lines.append(f'{name}: {why}')
        for finding in s.findings:
            lines.append(f'{name}: [{finding.level}] first at {finding.first:.3f} '
                         f's: {finding.text}')
    done = sum(s.status == EXIT_OK for s in summaries)
    lines.append(f'{done} of {counted(len(summaries), "run")} ok, in {_seconds(elapsed)}')
    print('\n'.join(lines))


if __name__ == '__main__':
    sys.exit(main())

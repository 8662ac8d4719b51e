"""The demo: the node and a motion source in their own processes, and a live view of /tf.

`python -m urdf_state_publisher.tools.demo` (or `make demo`) needs no ROS install besides the
Python
packages. It starts the node on the bundled sample robot and a motion source swinging every
joint, subscribes to /tf and /tf_static like any tf2 listener would, and redraws the kinematic
tree with every frame's pose chained from what the node published.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
import ctypes
from dataclasses import dataclass, field
import json
import math
import os
from pathlib import Path
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import TextIO

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.description import Joint, JointType
from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.exit_status import ArgumentParser
from urdf_state_publisher.geometry import Pose, rpy_from_quaternion, twist_angle
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.ros.launch_support import view_installed
from urdf_state_publisher.ros.process import init_ros, StopRequest
from urdf_state_publisher.ros.qos import TF_QOS, TF_STATIC_LISTENER_QOS
from urdf_state_publisher.ros.rclpy_capabilities import make_executor
from urdf_state_publisher.tools.demo_layout import FrameRow, lay_out
from urdf_state_publisher.tools.inspect import tree_prefix, walk_tree
from urdf_state_publisher.tools.motion_source import DEFAULT_RATE_HZ, positive_number
from urdf_state_publisher.words import counted

__all__ = ['RateMeter', 'Rates', 'TransformCache', 'bundled_description', 'joint_value', 'main',
           'render_summary', 'render_view']

PACKAGE = 'urdf_state_publisher'
SAMPLE_FILE = 'sample_arm.urdf'
TTY_PERIOD_S = 0.2        # redraw rate on a terminal
SNAPSHOT_PERIOD_S = 1.0   # one plain snapshot per second when the output is a file or a pipe
RATE_WINDOW_S = 2.0       # live rates are averaged over this window
MIN_RATE_SPAN_S = 0.5     # no rate is shown until this long after the first message
STOP_TIMEOUT_S = 5.0      # SIGINT, then this long, then SIGKILL
STARTUP_TIMEOUT_S = 30.0  # give up when nothing arrives on /tf for this long after the start
LIMIT_TOLERANCE = 1e-6

CLEAR_SCREEN = '\x1b[2J'
HOME = '\x1b[H'
CLEAR_TO_END_OF_LINE = '\x1b[K'
CLEAR_BELOW = '\x1b[J'
HIDE_CURSOR = '\x1b[?25l'
SHOW_CURSOR = '\x1b[?25h'


# Finding the sample robot ---------------------------------------------------------------------

def bundled_description(filename: str = SAMPLE_FILE) -> Path:
    """The path of a URDF bundled with the package.

    From a source checkout, the repository's `urdf/` folder next to the package; once
    installed, the package's share directory (found with ament_index_python).
    """
    checkout = Path(__file__).resolve().parents[2] / 'urdf' / filename
    if checkout.is_file():
        return checkout
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE)) / 'urdf' / filename
    except (ImportError, LookupError) as error:
        raise FileNotFoundError(
            f'cannot find the bundled {filename}: not in a source checkout ({checkout}) and '
            f'package {PACKAGE!r} is not installed in an ament index ({error})') from None


# What was received ----------------------------------------------------------------------------

class RateMeter:
    """Counts messages; the rate over the last few seconds and since the first message."""

    def __init__(self, window: float = RATE_WINDOW_S):
        self.count = 0
        self.first: float | None = None
        self.last: float | None = None
        self._window = window
        self._recent: deque[float] = deque()

    def tick(self, now: float) -> None:
        """Count one message received at `now` (monotonic seconds)."""
        self.count += 1
        if self.first is None:
            self.first = now
        self.last = now
        self._recent.append(now)
        while self._recent and self._recent[0] < now - self._window:
            self._recent.popleft()

    def rate(self, now: float) -> float | None:
        """Messages per second over the last `window` seconds (or since the first message).

        None while there is nothing to measure: before the first message and for
        MIN_RATE_SPAN_S after it.
        """
        while self._recent and self._recent[0] < now - self._window:
            self._recent.popleft()
        if self.first is None or now - self.first < MIN_RATE_SPAN_S:
            return None
        return len(self._recent) / min(self._window, now - self.first)

    def average(self) -> float:
        """Messages per second between the first and the last message (0 with fewer than 2)."""
        if self.count < 2 or self.last == self.first:
            return 0.0
        return (self.count - 1) / (self.last - self.first)


@dataclass
class TransformCache:
    """The latest transform received for each child frame, as a tf2 buffer keeps them."""

    parents: dict[str, tuple[str, Pose]] = field(default_factory=dict)
    frames: set[str] = field(default_factory=set)

    def add(self, message: TFMessage) -> None:
        """Remember every transform of a TFMessage (later ones replace earlier ones)."""
        for stamped in message.transforms:
            t, r = stamped.transform.translation, stamped.transform.rotation
            parent, child = stamped.header.frame_id, stamped.child_frame_id
            self.parents[child] = (parent, Pose((t.x, t.y, t.z), (r.x, r.y, r.z, r.w)))
            self.frames.update((parent, child))

    def transform(self, child: str) -> tuple[str, Pose] | None:
        """(parent, pose of `child` in parent) as last received, or None."""
        return self.parents.get(child)

    def pose_in(self, frame: str, root: str) -> Pose | None:
        """Pose of `frame` in `root`, chaining the transforms up the tree.

        None if a link of the chain has not been received (or the chain never reaches `root`),
        and for `root` itself until some transform names it.
        """
        if frame not in self.frames:
            return None
        pose = Pose()
        current = frame
        for _ in range(len(self.parents) + 1):
            if current == root:
                return pose
            entry = self.parents.get(current)
            if entry is None:
                return None
            current, step = entry
            pose = step * pose
        return None


def joint_value(joint: Joint, pose: Pose) -> float | None:
    """The value of a single-value joint whose child sits at `pose` in its parent.

    The inverse of the joint transform: the motion after the joint's origin, read along its
    axis (an angle in radians, wrapped to [-π, π], or a travel in metres). None for joints that
    have no single value.
    """
    if not joint.type.single_value:
        return None
    motion = Pose(joint.origin.xyz, joint.origin.rotation).inverse() * pose
    ax, ay, az = joint.axis
    if joint.type is JointType.PRISMATIC:
        t = motion.translation
        return t[0] * ax + t[1] * ay + t[2] * az
    return (twist_angle(motion.rotation, joint.axis) + math.pi) % (2.0 * math.pi) - math.pi


# Presentation ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rates:
    """The rates, in Hz, and message counts of the topics the demo watches.

    A rate is None until it is measured (RateMeter.rate).
    """

    tf: float | None = None
    tf_count: int = 0
    tf_static: float | None = None
    tf_static_count: int = 0
    joint_states: float | None = None
    joint_states_count: int = 0

    @classmethod
    def at(cls, now: float, tf: RateMeter, tf_static: RateMeter,
           joint_states: RateMeter) -> Rates:
        """What the three meters say at `now` (monotonic seconds)."""
        return cls(tf.rate(now), tf.count, tf_static.rate(now), tf_static.count,
                   joint_states.rate(now), joint_states.count)


NOT_MEASURED = 'measuring…'


def rate_text(rate: float | None) -> str:
    """A rate as shown: in Hz once measured, NOT_MEASURED before."""
    return NOT_MEASURED if rate is None else f'{rate:.1f} Hz'


def expected_frames(model: RobotModel) -> tuple[str, ...]:
    """Every frame the node should publish: all links and all sensor frames."""
    return tuple(model.links) + tuple(s.name for s in model.sensors)


def header(model: RobotModel, rates: Rates) -> str:
    """The line that says what the viewer is looking at."""
    return (f'urdf_state_publisher demo: node publishing {model.name} on /tf '
            f'({counted(len(model.movable_joints), "moving joint")}, {rate_text(rates.tf)}) '
            'and /tf_static '
            f'({counted(len(model.fixed_joints), "fixed frame")} + '
            f'{counted(len(model.sensors), "sensor")}); '
            f'motion source publishing joint_states, {rate_text(rates.joint_states)}; '
            'Ctrl-C to quit')


def _tree_rows(model: RobotModel) -> Iterator[tuple[str, str, Joint | None, str]]:
    """(tree prefix + frame, frame, joint that moves it, sensor type) in depth-first order."""
    yield model.root, model.root, None, ''
    for indent, item in walk_tree(model):
        if isinstance(item, Joint):
            yield tree_prefix(indent, 2) + item.child, item.child, item, ''
        else:
            yield tree_prefix(indent, 2) + item.name, item.name, None, item.type or '?'


def _format_value(model: RobotModel, joint: Joint, value: float | None) -> str:
    if value is None:
        return '—'
    if joint.type is JointType.PRISMATIC:
        text = f'{value:.3f} m'
    else:
        text = f'{math.degrees(value):.1f}°'
    lower, upper = model.limits(joint.name)
    if min(abs(value - lower), abs(value - upper)) < LIMIT_TOLERANCE:
        text += ' (limit)'
    return text


def _pose_numbers(pose: Pose | None) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    """A pose's position (metres) and roll, pitch, yaw (degrees); None, None if not known."""
    if pose is None:
        return None, None
    return (tuple(pose.translation),
            tuple(math.degrees(a) for a in rpy_from_quaternion(pose.rotation)))


def render_view(model: RobotModel, cache: TransformCache, rates: Rates, elapsed: float,
                size: tuple[int, int] | None = None, view_address: str | None = None) -> str:
    """The live view: header, topic rates, and one row per frame of the tree.

    With a `size` (columns, lines), laid out to fit it, saying what is left out
    (tools.demo_layout).
    `view_address`: where urdf_state_publisher_view shows the robot in a browser, if it runs.
    """
    expected = expected_frames(model)
    seen = sum(1 for f in expected if cache.pose_in(f, model.root) is not None)
    prose = [
        header(model, rates),
        f'after {elapsed:.1f} s: /tf {rate_text(rates.tf)} '
        f'({counted(rates.tf_count, "message")}), /tf_static {rate_text(rates.tf_static)} '
        f'({counted(rates.tf_static_count, "message")}, latched), joint_states '
        f'{rate_text(rates.joint_states)} '
        f'({counted(rates.joint_states_count, "message")}); frames seen {seen}/{len(expected)} '
        '(connected to the root)',
    ]
    if view_address is not None:
        prose.append(f'in a browser: {view_address}')
    legend = [
        f'Poses: each frame in root frame {model.root!r}, chained from the transforms received '
        'on /tf and /tf_static. Values: decoded from those transforms (* = mimic joint, set by '
        'the node from its leader; (limit) = clamped).',
        '',
    ]
    rows = []
    for label, frame, joint, sensor_type in _tree_rows(model):
        pose = cache.pose_in(frame, model.root)
        if joint is None:
            name, kind, value = ('', f'sensor:{sensor_type}', '') if sensor_type else \
                ('(root)', '', '')
        else:
            name = joint.name + ('*' if joint.mimic is not None else '')
            kind = joint.type.value
            value = ''
            if joint.type.single_value:
                received = cache.transform(frame)
                value = _format_value(model, joint, None if received is None
                                      else joint_value(joint, received[1]))
        if pose is None:
            value = value if value not in ('', '—') else '(not received yet)'
        rows.append(FrameRow(label, name, kind, value, *_pose_numbers(pose)))
    return '\n'.join(lay_out(prose, rows, size, legend))


def render_summary(model: RobotModel, cache: TransformCache, tf: RateMeter,
                   tf_static: RateMeter, joint_states: RateMeter, elapsed: float,
                   watched: float | None = None) -> str:
    """The final report: messages and rates per topic, and which expected frames were seen.

    `elapsed`: seconds since the demo started; `watched`: since the first /tf message (what
    --duration counts), None if none came. The difference is the processes' start.
    """
    expected = expected_frames(model)
    missing = [f for f in expected if cache.pose_in(f, model.root) is None]
    extra = sorted(cache.frames.difference(expected))
    if watched is None:
        heading = f'summary after {elapsed:.1f} s (no /tf message came):'
    else:
        heading = (f'summary of {watched:.1f} s of /tf, from its first message ({elapsed:.1f} s '
                   f'after the demo started: the node and the motion source took '
                   f'{elapsed - watched:.1f} s to start and publish):')
    lines = [
        heading,
        f'  /tf: {counted(tf.count, "message")}, {tf.average():.1f} Hz',
        f'  /tf_static: {counted(tf_static.count, "message")} (latched: published once per '
        'model)',
        f'  joint_states: {counted(joint_states.count, "message")}, '
        f'{joint_states.average():.1f} Hz',
        f'  frames seen: {len(expected) - len(missing)} of {len(expected)} expected '
        f'({counted(len(model.links), "link")} + {counted(len(model.sensors), "sensor")}), '
        'each with its whole chain '
        f'of transforms to root {model.root!r}',
    ]
    if missing:
        lines.append(f'  MISSING {counted(len(missing), "expected frame")}: '
                     f'{", ".join(missing)}')
    else:
        lines.append(f'  all {len(expected)} expected frames seen: {", ".join(expected)}')
    if extra:
        lines.append(f'  frames not in the model: {", ".join(extra)}')
    return '\n'.join(lines)


# ROS side -------------------------------------------------------------------------------------

class Viewer(Node):
    """Listens to /tf, /tf_static and joint_states, like any tf2 listener."""

    def __init__(self, **node_options):
        super().__init__('urdf_state_publisher_demo_viewer', **node_options)
        self.cache = TransformCache()
        self.tf = RateMeter()
        self.tf_static = RateMeter()
        self.joint_states = RateMeter()
        self.create_subscription(TFMessage, '/tf', self._on_tf, TF_QOS)
        self.create_subscription(TFMessage, '/tf_static', self._on_tf_static,
                                 TF_STATIC_LISTENER_QOS)
        self.create_subscription(JointState, 'joint_states', self._on_joint_state,
                                 qos_profile_sensor_data)

    def _on_tf(self, message: TFMessage) -> None:
        self.tf.tick(time.monotonic())
        self.cache.add(message)

    def _on_tf_static(self, message: TFMessage) -> None:
        self.tf_static.tick(time.monotonic())
        self.cache.add(message)

    def _on_joint_state(self, message: JointState) -> None:
        self.joint_states.tick(time.monotonic())

    def rates(self, now: float) -> Rates:
        """The live rates at `now` (monotonic seconds)."""
        return Rates.at(now, self.tf, self.tf_static, self.joint_states)


# prctl(2): have the kernel send a signal to this process when its parent dies.
PR_SET_PDEATHSIG = 1


def _exit_with_this_process() -> Callable[[], None]:
    """A function for a child to run before exec: it gets SIGTERM when this process ends.

    However this process ends: Ctrl-C, SIGTERM and SIGHUP stop the children in order
    (ChildProcess.stop), but a crash or SIGKILL runs no Python code at all; only the kernel can
    then stop them. (Linux only, like the demo.)
    """
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def exit_with_parent() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return exit_with_parent


class ChildProcess:
    """A Python module run in its own process and session, its output kept in a log file.

    It ends when the demo ends, however the demo ends.
    """

    def __init__(self, name: str, arguments: Sequence[str], log_dir: Path):
        self.name = name
        self.log_path = log_dir / f'{name}.log'
        env = dict(os.environ, PYTHONUNBUFFERED='1')
        source_root = Path(__file__).resolve().parents[2]
        if (source_root / 'package.xml').is_file():
            # A source checkout, maybe not installed: the children import the package from it.
            env['PYTHONPATH'] = os.pathsep.join(
                p for p in (str(source_root), env.get('PYTHONPATH')) if p)
        with open(self.log_path, 'w') as log:
            # A session of its own: Ctrl-C reaches only the demo, which stops children in order.
            self.process = subprocess.Popen(
                [sys.executable, *arguments], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=env, start_new_session=True,
                preexec_fn=_exit_with_this_process())

    def exited(self) -> int | None:
        """The exit status if the process has ended, else None."""
        return self.process.poll()

    def output(self) -> str:
        """Everything the process printed so far."""
        try:
            return self.log_path.read_text(errors='replace')
        except OSError:
            return ''

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGINT, wait up to `timeout` seconds, then SIGKILL; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def node_arguments(description: Path, publish_frequency: float,
                   params_file: Path | None) -> list[str]:
    """`-m urdf_state_publisher` with the demo's parameters."""
    # -p values are YAML: a JSON string keeps a path a string whatever it looks like.
    arguments = ['-m', PACKAGE, '--ros-args',
                 '-p', f'description_file:={json.dumps(str(description))}',
                 '-p', f'publish_frequency:={float(publish_frequency)!r}']
    if params_file is not None:
        arguments += ['--params-file', str(params_file)]
    return arguments


def view_port() -> int:
    """The view's default port if it is free here, else one the system says is free."""
    from urdf_state_publisher.view.command import DEFAULT_PORT

    for port in (DEFAULT_PORT, 0):
        with socket.socket() as probe:
            try:
                probe.bind(('127.0.0.1', port))
            except OSError:
                continue
            return probe.getsockname()[1]
    raise OSError('no free port for the view')


def view_arguments(port: int) -> list[str]:
    """urdf_state_publisher_view on `port`, without sliders: the motion source drives."""
    return ['-c', 'import sys; from urdf_state_publisher.view.entry import main; '
            'sys.exit(main())', '--port', str(port), '--no-sliders']


def motion_source_arguments(description: Path, rate: float,
                            xacro_args: Sequence[str]) -> list[str]:
    """`-m urdf_state_publisher.tools.motion_source` for the same robot."""
    arguments = ['-m', f'{PACKAGE}.tools.motion_source', '--description-file', str(description),
                 '--rate', repr(float(rate))]
    for argument in xacro_args:
        arguments += ['--xacro-arg', argument]
    return arguments


class Screen:
    """Redraws in place on a terminal; prints plain snapshots to a file or a pipe."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.interactive = stream.isatty()
        self.period = TTY_PERIOD_S if self.interactive else SNAPSHOT_PERIOD_S
        self._started = False

    def size(self) -> tuple[int, int] | None:
        """The room for the view; None (no limit) for a file or a pipe.

        The terminal's (columns, lines), but its last line: the cursor's.
        """
        if not self.interactive:
            return None
        size = shutil.get_terminal_size()
        return size.columns, max(size.lines - 1, 1)

    def show(self, text: str) -> None:
        if not self.interactive:
            self.stream.write(text + '\n' + '-' * 40 + '\n')
            self.stream.flush()
            return
        size = shutil.get_terminal_size()
        # Cut to the screen: a line that wraps or a screen that scrolls breaks redrawing.
        lines = [line[:size.columns] + CLEAR_TO_END_OF_LINE
                 for line in text.splitlines()[:max(size.lines - 1, 1)]]
        prefix = HIDE_CURSOR + CLEAR_SCREEN if not self._started else ''
        self._started = True
        self.stream.write(prefix + HOME + '\n'.join(lines) + '\n' + CLEAR_BELOW)
        self.stream.flush()

    def close(self) -> None:
        if self.interactive and self._started:
            self._started = False
            self.stream.write(SHOW_CURSOR)
            self.stream.flush()


# main -----------------------------------------------------------------------------------------

def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog='urdf_state_publisher_demo',
        description='Run urdf_state_publisher on a robot (the bundled sample_arm by default) '
                    'with a motion source driving every joint, and show live what it '
                    'publishes on /tf and /tf_static.',
        epilog='The demo uses the ROS_DOMAIN_ID of its environment, and keeps DDS discovery on '
               'this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) unless '
               'ROS_AUTOMATIC_DISCOVERY_RANGE or ROS_LOCALHOST_ONLY is set.')
    parser.add_argument('--model', type=Path, metavar='PATH',
                        help='a .urdf or .xacro file to demo instead of the sample robot')
    parser.add_argument('--xacro-arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='an argument for a .xacro --model (repeatable)')
    parser.add_argument('--rate', type=positive_number, default=DEFAULT_RATE_HZ, metavar='HZ',
                        help='joint_states messages per second from the motion source '
                             f'(default {DEFAULT_RATE_HZ:g})')
    parser.add_argument('--publish-frequency', type=positive_number, metavar='HZ',
                        help="the node's publish_frequency parameter (default: twice --rate, "
                             'so that every joint state is published)')
    parser.add_argument('--duration', type=positive_number, metavar='SECONDS',
                        help='watch for this long, counted from the first /tf message, then '
                             'print a summary and exit 0 (default: run until Ctrl-C)')
    return parser


def main(argv: Sequence[str] | None = None, stop: StopRequest | None = None) -> int:
    """Run the demo; 0 when stopped by a signal or --duration, 1 if a process fails.

    `stop`: the handlers the entry point put in place before it imported this module.
    """
    stop = stop or StopRequest()
    args = _parser().parse_args(argv)
    try:
        description = (args.model or bundled_description()).absolute()
        model = RobotModel.from_file(description, args.xacro_arg)
    except (DescriptionError, FileNotFoundError) as error:
        print(f'urdf_state_publisher_demo: {error}', file=sys.stderr)
        return 1
    publish_frequency = args.publish_frequency or 2.0 * args.rate

    # A demo stays on this machine unless told otherwise (children inherit the environment).
    if not {'ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY'} & set(os.environ):
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    start = time.monotonic()
    status = 0
    children: list[ChildProcess] = []
    with tempfile.TemporaryDirectory(prefix='urdf_state_publisher_demo_') as temporary:
        log_dir = Path(temporary)
        params_file = None
        if args.xacro_arg:
            params_file = log_dir / 'params.yaml'
            params_file.write_text(json.dumps(
                {'/**': {'ros__parameters': {'xacro_args': list(args.xacro_arg)}}}))
        try:
            # Started before rclpy's threads exist: ChildProcess runs code between fork and exec.
            children.append(ChildProcess(
                'urdf_state_publisher',
                node_arguments(description, publish_frequency, params_file), log_dir))
            children.append(ChildProcess(
                'motion_source', motion_source_arguments(description, args.rate, args.xacro_arg),
                log_dir))
            view_address = None
            if view_installed():
                port = view_port()
                view_address = f'http://127.0.0.1:{port}'
                children.append(ChildProcess('urdf_state_publisher_view',
                                             view_arguments(port), log_dir))
            context = Context()
            init_ros([], context)
            viewer = Viewer(context=context)
            executor = make_executor(context)
            executor.add_node(viewer)
            screen = Screen(sys.stdout)
            try:
                status = _run(model, viewer, executor, screen, children, start, args.duration,
                              stop, view_address)
                screen.close()
                # After SIGHUP the terminal is gone: nothing more to show.
                if status == 0 and stop.signal != signal.SIGHUP:
                    now = time.monotonic()
                    watched = None if viewer.tf.first is None else now - viewer.tf.first
                    print(render_summary(model, viewer.cache, viewer.tf, viewer.tf_static,
                                         viewer.joint_states, now - start, watched),
                          flush=True)
            finally:
                executor.shutdown()
                viewer.destroy_node()
                rclpy.try_shutdown(context=context)
        finally:
            for child in reversed(children):
                child.stop()
    return status


def _fail(screen: Screen, message: str, children: Sequence[ChildProcess]) -> int:
    screen.close()
    parts = [f'\nurdf_state_publisher_demo: {message}']
    parts += [f'--- output of {child.name} ---\n{child.output().rstrip()}' for child in children]
    print('\n'.join(parts), file=sys.stderr, flush=True)
    return 1


def _run(model: RobotModel, viewer: Viewer, executor: Executor, screen: Screen,
         children: Sequence[ChildProcess], start: float, duration: float | None,
         stop: StopRequest, view_address: str | None) -> int:
    """Spin and redraw until a stop signal or `duration` seconds after the first /tf message.

    1 as soon as a child process ends, or if no /tf message arrives in STARTUP_TIMEOUT_S.
    """
    next_draw = start
    while not stop.requested:
        now = time.monotonic()
        for child in children:
            code = child.exited()
            if code is not None:
                return _fail(screen, f'{child.name} exited with status {code}', [child])
        live_since = viewer.tf.first
        if live_since is None and now - start > STARTUP_TIMEOUT_S:
            return _fail(screen, f'nothing arrived on /tf within {STARTUP_TIMEOUT_S:g} s '
                         f'(/tf_static: {counted(viewer.tf_static.count, "message")}, '
                         f'joint_states: {counted(viewer.joint_states.count, "message")})',
                         children)
        finished = duration is not None and live_since is not None and now - live_since >= duration
        if finished or now >= next_draw:
            screen.show(render_view(model, viewer.cache, viewer.rates(now), now - start,
                                    screen.size(), view_address))
            if finished:
                return 0
            next_draw += screen.period
            if next_draw < now:
                next_draw = now + screen.period
        executor.spin_once(timeout_sec=min(0.05, max(0.0, next_draw - time.monotonic())))
    return 0


if __name__ == '__main__':
    sys.exit(main())

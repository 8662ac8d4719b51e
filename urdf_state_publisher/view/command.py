"""urdf_state_publisher_view: the command line, and the page's loop (viser).

The robot's links are posed from /tf and /tf_static, 40 times a second at most, each link sent
to the browser only when its pose changed. The sliders publish a JointState when one moves.
"""

from __future__ import annotations

import os
import sys
import time

from urdf_state_publisher.exit_status import ArgumentParser, FAILED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from urdf_state_publisher.ros.process import StopRequest

__all__ = ['build_parser', 'main']

PROG = 'urdf_state_publisher_view'
DEFAULT_HOST = '127.0.0.1'
DEFAULT_PORT = 8080
# The page is redrawn this often at most: above the 30 a second that a moving robot needs to
# look smooth, with room for the ticks a loaded machine loses; a redraw costs the view's
# process CPU for every link that moved (bench --only view).
UPDATES_PER_SECOND = 40


def build_parser() -> ArgumentParser:
    """The command line of urdf_state_publisher_view."""
    parser = ArgumentParser(
        prog=PROG,
        description='Shows the robot in a browser, posed from /tf and /tf_static as RViz '
                    'poses it, with joint sliders that publish sensor_msgs/JointState. The page '
                    'has no login: --host 0.0.0.0 is for a trusted network only.',
        epilog='ROS arguments go after --ros-args (-r FROM:=TO, -r __ns:=/NAMESPACE). A stop '
               'signal (Ctrl-C, SIGTERM, SIGHUP) ends it: exit status 0.')
    parser.add_argument('bag', nargs='?', metavar='BAG',
                        help='a recording (rosbag2, or ROS 1) to show from its /tf, /tf_static '
                             'and robot_description, with a timeline to play and scrub; '
                             'without it, the live ROS graph')
    parser.add_argument('--description', metavar='FILE',
                        help='the robot description (URDF or .xacro); default: the '
                             "robot_description topic (or the recording's)")
    parser.add_argument('--package-path', metavar='NAME=DIR', action='append', default=[],
                        help="where package NAME's files are, for package:// meshes without "
                             'ROS (repeatable); otherwise the ament index says')
    parser.add_argument('--host', default=DEFAULT_HOST,
                        help=f'the address to listen on (default {DEFAULT_HOST}; 0.0.0.0: '
                             'every interface, for a trusted network)')
    parser.add_argument('--port', type=int, default=DEFAULT_PORT,
                        help=f'the port of the page (default {DEFAULT_PORT})')
    parser.add_argument('--topic', default='joint_states',
                        help='where the sliders publish (default joint_states; or a source '
                             'topic that urdf_state_publisher merges)')
    parser.add_argument('--frame-prefix', default='', metavar='PREFIX',
                        help="the prefix of the robot's frames in /tf, as the publisher's "
                             'frame_prefix parameter gives it (robot1/)')
    parser.add_argument('--no-sliders', action='store_true',
                        help='no sliders (a driver publishes the joint states)')
    return parser


def _package_paths(words: list[str], parser: ArgumentParser) -> dict[str, str]:
    paths = {}
    for word in words:
        name, equals, directory = word.partition('=')
        if not equals or not name or not directory:
            parser.error(f'--package-path {word!r}: give it as NAME=DIR')
        paths[name] = directory
    return paths


def _find_package():
    """The ament index's lookup of a package's share directory, or None without it."""
    try:
        from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
    except ImportError:
        return None

    def find(name: str) -> str:
        try:
            return get_package_share_directory(name)
        except (PackageNotFoundError, OSError):  # OSError: no AMENT_PREFIX_PATH at all
            raise LookupError(name) from None

    return find


def main(argv: list[str] | None = None, stop: StopRequest | None = None) -> int:
    """Run the view until `stop` is requested."""
    from urdf_state_publisher.ros.process import StopRequest

    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    # What follows --ros-args is rcl's (ros2 launch and ros2 run pass remaps and a namespace).
    ros_words = words[words.index('--ros-args'):] if '--ros-args' in words else []
    args = parser.parse_args(words[:len(words) - len(ros_words)])
    package_paths = _package_paths(args.package_path, parser)
    if not 0 <= args.port <= 65535:
        parser.error(f'--port {args.port}: give a port from 0 to 65535')
    stop = stop or StopRequest()
    description = None
    if args.description is not None:
        from urdf_state_publisher.description import DescriptionError, read_description_file

        try:
            description = read_description_file(args.description).text
        except DescriptionError as exc:
            print(f'{PROG}: {exc}', file=sys.stderr)
            return FAILED
    try:
        import viser
    except ImportError:
        print(f"{PROG}: viser is not installed; install the package's view extra "
              "(pip install 'urdf_state_publisher[view]')", file=sys.stderr)
        return FAILED
    if args.bag is not None:
        try:
            import rosbags  # noqa: F401 - asked for here to say how to install it
        except ImportError:
            print(f"{PROG}: a recording is read with rosbags; install the package's bag extra "
                  "(pip install 'urdf_state_publisher[bag]')", file=sys.stderr)
            return FAILED
        from urdf_state_publisher.recorded.input import BagInputError
        from urdf_state_publisher.view.bag_source import BagLink, read_recording

        try:
            recording = read_recording(args.bag)
        except BagInputError as exc:
            print(f'{PROG}: {exc}', file=sys.stderr)
            return FAILED
        description = description or recording.description
        if description is None:
            print(f'{PROG}: {args.bag}: no robot_description recorded; give --description '
                  'FILE (a .urdf or .xacro)', file=sys.stderr)
            return FAILED
        link = BagLink(recording.timeline)
        args.no_sliders = True  # a recording's joints move as they were recorded
    else:
        from urdf_state_publisher.view.ros_link import RosLink

        link = RosLink(None if args.no_sliders else args.topic,
                       description_topic=description is None, ros_arguments=ros_words)
    try:
        server = viser.ViserServer(host=args.host, port=args.port, verbose=False)
    except OSError as exc:
        link.close()
        print(f'{PROG}: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; '
              'choose another with --port', file=sys.stderr)
        return FAILED
    print(f'{PROG}: the robot is at http://{args.host}:{server.get_port()}', flush=True)
    description_dir = None if args.description is None else \
        os.path.dirname(os.path.abspath(args.description))
    page = None
    seen = 0
    text = description  # a description to show, until it is shown
    player = None if args.bag is None else Player(server, link)
    next_tick = time.monotonic()
    try:
        while not stop.requested:
            if player is not None:
                player.advance()
            with link.lock:
                if description is None and link.description_count != seen:
                    seen = link.description_count
                    text = link.description
            if text is not None:
                if page is not None:
                    page.remove()
                page = _build_page(server, text, link, package_paths, description_dir,
                                   sliders=not args.no_sliders, frame_prefix=args.frame_prefix)
                text = None
            if page is not None:
                page.draw()
            # Ticks at a steady rate, however long a draw took (a late tick is not made up).
            next_tick = max(next_tick + 1.0 / UPDATES_PER_SECOND, time.monotonic())
            time.sleep(max(0.0, next_tick - time.monotonic()))
    finally:
        server.stop()
        link.close()
    return 0


class Player:
    """The timeline of a recording: a slider of its time, and Play/Pause at its real speed."""

    def __init__(self, server, link):
        self.link = link
        timeline = link.timeline
        self.duration_s = (timeline.end_ns - timeline.start_ns) / 1e9
        folder = server.gui.add_folder('Recording')
        with folder:
            self.time = server.gui.add_slider(
                'time (s)', min=0.0, max=max(self.duration_s, 1e-3),
                step=max(self.duration_s, 1e-3) / 1000, initial_value=0.0)
            self.play = server.gui.add_button('Play')
        self.playing = False
        self._last = time.monotonic()
        self.time.on_update(lambda event: link.seek(
            timeline.start_ns + int(event.target.value * 1e9)))

        @self.play.on_click
        def _(event) -> None:
            self.playing = not self.playing
            if self.playing and self.time.value >= self.duration_s:
                self.time.value = 0.0  # played to the end: from the start again
            self.play.label = 'Pause' if self.playing else 'Play'

    def advance(self) -> None:
        """Move the time on by the time passed, while playing; stop at the end."""
        now = time.monotonic()
        elapsed, self._last = now - self._last, now
        if not self.playing:
            return
        position = min(self.time.value + elapsed, self.duration_s)
        self.time.value = position
        if position >= self.duration_s:
            self.playing = False
            self.play.label = 'Play'


def _build_page(server, text, link, package_paths, description_dir, *, sliders, frame_prefix):
    from urdf_state_publisher.description import DescriptionError
    from urdf_state_publisher.view.page import Page

    try:
        return Page(server, text, link, package_paths, _find_package(), description_dir,
                    sliders=sliders, frame_prefix=frame_prefix)
    except DescriptionError as exc:
        print(f'{PROG}: the robot description cannot be shown: {exc}', file=sys.stderr)
        return None



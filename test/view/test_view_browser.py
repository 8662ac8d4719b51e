"""urdf_state_publisher_view in a real browser: Debian's Chromium, headless, driven by playwright.

Real processes over real DDS: the node (`urdf_state_publisher`), the view, and the test's probe.
The picture is judged by its pixels: where the robot stands, a page with the robot differs from
a page with an empty scene, and a joint that moves changes the picture. Expected transforms
come from node_fixtures' own quaternion algebra; the slider's range from the URDF's text.
"""

from __future__ import annotations

import ast
import io
import math
from pathlib import Path
import shlex
import signal
import socket
import sys
import time
import xml.etree.ElementTree as ElementTree

from node_fixtures import (
    ARM,
    assert_pose,
    BEST_EFFORT,
    deeper,
    joint_state,
    LoggedProcess,
    ns,
    RELIABLE,
    sample_pose,
)
import numpy as np
from PIL import Image
from playwright.sync_api import sync_playwright
import pytest
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
SAMPLE_URDF = REPO / 'urdf' / 'sample_arm.urdf'
SETUP_PY = REPO / 'setup.py'
CHROMIUM = '/usr/bin/chromium'  # Debian's; pytest_oracles.py names it too
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                 '--no-first-run', '--disable-background-networking',
                 '--disable-component-update', '--disable-sync']
WAIT_S = 60.0  # bounds a wait only: generous, for a loaded machine
# Where the sample robot stands in an 800×600 page: right of the axes (x < 60), below the
# notice of software WebGL (y < 150), left of the GUI panel (x > 460).
SCENE_BOX = (120, 160, 460, 560)


def free_port() -> int:
    with socket.socket() as probe_socket:
        probe_socket.bind(('127.0.0.1', 0))
        return probe_socket.getsockname()[1]


class View(LoggedProcess):
    """urdf_state_publisher_view in its own process, on a free port."""

    def __init__(self, tmp_path: Path, *arguments: str):
        self.port = free_port()
        super().__init__([sys.executable, '-c',
                          'import sys; from urdf_state_publisher.view.entry import main; '
                          'sys.exit(main())', '--port', str(self.port), *arguments],
                         tmp_path / f'view_{self.port}.log')
        self.url = f'http://127.0.0.1:{self.port}'

    def wait_listening(self) -> None:
        deadline = time.monotonic() + WAIT_S
        while f'{self.url}\n' not in self.output():
            assert self.running(), self.output()[-2000:]
            assert time.monotonic() < deadline, f'the view never listened: {self.output()}'
            time.sleep(0.1)


@pytest.fixture
def browser():
    # playwright's launch gives Chromium a fresh profile in a temporary folder of its own.
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def views(tmp_path):
    started: list[View] = []

    def start(*arguments: str) -> View:
        view = View(tmp_path, *arguments)
        started.append(view)
        view.wait_listening()
        return view

    yield start
    # One SIGINT each, all at once (stop_all would send a second to a view still shutting down,
    # which Python's finalization no longer handles); a stop is the view's normal end.
    for view in started:
        view.process.send_signal(signal.SIGINT)
    statuses = [view.process.wait(WAIT_S) for view in started]
    for view in started:
        view.stop()  # closes its log
    assert statuses == [0] * len(started), [view.output()[-2000:] for view in started]


def open_page(browser, view: View):
    page = browser.new_page(viewport={'width': 800, 'height': 600})
    page.goto(view.url, timeout=WAIT_S * 1000)
    page.get_by_text('Connected').wait_for(timeout=WAIT_S * 1000)
    return page


def scene_pixels(page) -> np.ndarray:
    png = page.screenshot(clip=dict(x=SCENE_BOX[0], y=SCENE_BOX[1],
                                    width=SCENE_BOX[2] - SCENE_BOX[0],
                                    height=SCENE_BOX[3] - SCENE_BOX[1]))
    return np.asarray(Image.open(io.BytesIO(png)).convert('RGB'), dtype=np.int16)


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    return int((np.abs(a - b).max(axis=2) > 40).sum())


def wait_for_picture(page, predicate, what: str) -> np.ndarray:
    """Screenshots of the scene until one satisfies `predicate`; fail after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while True:
        pixels = scene_pixels(page)
        if predicate(pixels):
            return pixels
        assert time.monotonic() < deadline, f'timed out waiting for {what}'
        time.sleep(0.25)


# Enough changed pixels to be a link drawn or moved, far more than antialiasing's noise.
LINK_PIXELS = 300


def robot_node(start_node):
    return start_node({'description_file': str(SAMPLE_URDF), 'publish_frequency': 20.0})


def test_the_page_draws_the_robot_where_an_empty_scene_is_empty(browser, views, start_node):
    empty = views()  # no description: nothing to draw
    empty_page = open_page(browser, empty)
    time.sleep(1.0)  # the empty page has had time to draw anything it would
    blank = scene_pixels(empty_page)
    robot_node(start_node)
    view = views('--no-sliders')
    page = open_page(browser, view)

    wait_for_picture(page, lambda pixels: changed_pixels(pixels, blank) > 5 * LINK_PIXELS,
                     'the robot to be drawn')


def slider_upper_limit(joint: str) -> float:
    robot = ElementTree.parse(SAMPLE_URDF).getroot()
    element = next(j for j in robot.iter('joint') if j.get('name') == joint)
    return float(element.find('limit').get('upper'))


def test_a_slider_moves_its_link_and_the_node_publishes_it_on_tf(browser, views, start_node,
                                                                 probe):
    robot_node(start_node)
    tf = probe.record(TFMessage, '/tf', deeper(RELIABLE, 1000))
    states = probe.record(JointState, 'joint_states', deeper(BEST_EFFORT, 1000))
    view = views('--description', str(SAMPLE_URDF))
    page = open_page(browser, view)
    at_rest = wait_for_picture(page, lambda pixels: changed_pixels(
        pixels, np.full_like(pixels, 255)) > 5 * LINK_PIXELS, 'the robot to be drawn')
    upper = slider_upper_limit('elbow_joint')

    # The elbow's slider, by its label; End puts a slider at its upper end.
    slider_id = page.locator('label', has_text='elbow_joint').get_attribute('for')
    page.locator(f'[id="{slider_id}"] [role=slider]').press('End')

    probe.wait_until(lambda: any(
        'elbow_joint' in m.name and math.isclose(m.position[m.name.index('elbow_joint')], upper)
        for m in states), WAIT_S, "the slider's JointState")

    def elbow_at_upper(message) -> bool:
        return any(t.child_frame_id == 'forearm_link' and
                   abs(t.transform.rotation.y - sample_pose('elbow_joint', upper)[1][1]) < 1e-6
                   for t in message.transforms)

    probe.wait_until(lambda: any(elbow_at_upper(m) for m in tf), WAIT_S, 'the elbow on /tf')
    stamped = next(t for m in tf if elbow_at_upper(m) for t in m.transforms
                   if t.child_frame_id == 'forearm_link')
    assert_pose(stamped, sample_pose('elbow_joint', upper))
    wait_for_picture(page, lambda pixels: changed_pixels(pixels, at_rest) > LINK_PIXELS,
                     'the forearm to move in the picture')


def test_a_joint_state_from_another_process_moves_the_drawn_robot(browser, views, start_node,
                                                                  probe):
    robot_node(start_node)
    view = views('--no-sliders')
    page = open_page(browser, view)
    at_rest = wait_for_picture(page, lambda pixels: changed_pixels(
        pixels, np.full_like(pixels, 255)) > 5 * LINK_PIXELS, 'the robot to be drawn')
    publisher = probe.node.create_publisher(JointState, 'joint_states', RELIABLE)
    stamps = iter(range(ns(10), ns(10_000), ns(0, 200_000_000)))

    def publish_until_the_picture_changes(reference, values, what) -> np.ndarray:
        deadline = time.monotonic() + WAIT_S
        while True:
            publisher.publish(joint_state(next(stamps), values))
            probe.spin_for(0.2)
            pixels = scene_pixels(page)
            if changed_pixels(pixels, reference) > LINK_PIXELS:
                return pixels
            assert time.monotonic() < deadline, f'timed out waiting for {what}'

    # The arm's joints are on /tf once a state names them: before, only the fixed links are.
    zero = dict.fromkeys(ARM, 0.0)
    at_zero = publish_until_the_picture_changes(at_rest, zero, 'the arm to be drawn')
    publish_until_the_picture_changes(at_zero, {**zero, 'shoulder_lift_joint': 1.2},
                                      'the upper arm to move in the picture')


def test_the_pages_commands_show_the_robot_in_the_browser(browser, views, start_node):
    from test_doc_examples import block

    install, node, view_command = block('view.md', "pip install 'urdf_state_publisher[view]'"
                                        ).splitlines()
    assert install.split()[:2] == ['pip', 'install']
    setup = next(node for node in ast.walk(ast.parse(SETUP_PY.read_text()))
                 if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'setup')
    extras = ast.literal_eval(next(k.value for k in setup.keywords
                                   if k.arg == 'extras_require'))
    assert any(r.startswith('viser') for r in extras[install.split('[')[1].rstrip("]'")])
    words = shlex.split(node)
    assert words[:2] == ['urdf_state_publisher', '--ros-args'] and words[-1] == '&'
    parameter = words[words.index('-p') + 1]
    name, _, value = parameter.partition(':=')
    start_node({name: str(REPO / value)})
    (command, *arguments) = shlex.split(view_command)
    assert command == 'urdf_state_publisher_view'
    page = open_page(browser, views(*arguments))

    wait_for_picture(page, lambda pixels: changed_pixels(
        pixels, np.full_like(pixels, 255)) > 5 * LINK_PIXELS, 'the robot to be drawn')


def test_one_robot_of_several_is_drawn_from_its_prefixed_frames(browser, views, start_node):
    from test_doc_examples import block

    command = block('view.md', 'ros2 run urdf_state_publisher urdf_state_publisher_view '
                               '--frame-prefix robot1/ \\').replace('\\\n', ' ')
    words = shlex.split(command)
    assert words[:4] == ['ros2', 'run', 'urdf_state_publisher', 'urdf_state_publisher_view']
    start_node({'description_file': str(SAMPLE_URDF), 'frame_prefix': 'robot1/'},
               ('-r', '__ns:=/robot1'))
    unprefixed = open_page(browser, views('--no-sliders', *words[words.index('--ros-args'):]))
    page = open_page(browser, views('--no-sliders', *words[4:]))

    wait_for_picture(page, lambda pixels: changed_pixels(
        pixels, np.full_like(pixels, 255)) > 5 * LINK_PIXELS, 'the robot drawn from robot1/')
    # Without the prefix, no transform names a link of the description: nothing is drawn (the
    # root, base_footprint, has no visual), as RViz shows no link without its transform. The
    # page has the description (its check boxes come with it): blank for that reason alone.
    unprefixed.get_by_text('Frames').wait_for(timeout=WAIT_S * 1000)
    blank = scene_pixels(unprefixed)
    assert changed_pixels(blank, np.full_like(blank, 255)) < LINK_PIXELS


SWING_URDF = """<robot name="swing">
  <link name="base"><visual><geometry><box size="0.4 0.4 0.1"/></geometry></visual></link>
  <link name="arm"><visual><origin xyz="0.4 0 0"/><geometry><box size="0.8 0.1 0.1"/>
    </geometry><material name="red"><color rgba="1 0 0 1"/></material></visual></link>
  <joint name="swing" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
</robot>"""


def red_pixels(pixels: np.ndarray) -> int:
    """Pixels of the swing's red arm (lit, shaded: red well above green and blue)."""
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return int(((red > 90) & (red > 2 * green + 30) & (red > 2 * blue + 30)).sum())


# In `make test-long` only: in one CI run of four (rows two at a time), the picture after the
# seek back to 1 s never came within a tenth of a link's pixels of the first one, with the
# whole robot in that first picture; alone, under three busy loops, and in the other runs it
# passed. The cause is not found (the page's camera was seen still from the first picture).
@pytest.mark.slow
def test_a_recording_s_timeline_moves_the_drawn_robot(browser, views, tmp_path):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import get_typestore, Stores

    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    start_ns = 1_700_000_000 * 10**9

    def tf(angle: float, time_ns: int) -> bytes:
        stamped = types['geometry_msgs/msg/TransformStamped'](
            header=types['std_msgs/msg/Header'](stamp=types['builtin_interfaces/msg/Time'](
                sec=time_ns // 10**9, nanosec=time_ns % 10**9), frame_id='base'),
            child_frame_id='arm', transform=types['geometry_msgs/msg/Transform'](
                translation=types['geometry_msgs/msg/Vector3'](x=0.0, y=0.0, z=0.1),
                rotation=types['geometry_msgs/msg/Quaternion'](
                    x=0.0, y=0.0, z=math.sin(angle / 2), w=math.cos(angle / 2))))
        return bytes(store.serialize_cdr(types['tf2_msgs/msg/TFMessage'](transforms=[stamped]),
                                         'tf2_msgs/msg/TFMessage'))

    bag = tmp_path / 'swing'
    writer = Writer(bag, version=9)
    writer.open()
    description = writer.add_connection('/robot_description', 'std_msgs/msg/String',
                                        typestore=store)
    transforms = writer.add_connection('/tf', 'tf2_msgs/msg/TFMessage', typestore=store)
    writer.write(description, start_ns, bytes(store.serialize_cdr(
        types['std_msgs/msg/String'](data=SWING_URDF), 'std_msgs/msg/String')))
    for second in range(5):  # still for 2 s, then a half turn
        writer.write(transforms, start_ns + second * 10**9,
                     tf(0.0 if second < 2 else math.pi / 2, start_ns + second * 10**9))
    writer.close()
    page = open_page(browser, views(str(bag)))
    # The whole robot: its base, and its arm, which is drawn once its first /tf is applied
    # (a picture of the base alone, on a loaded machine, would make every later one differ).
    at_start = wait_for_picture(page, lambda pixels: changed_pixels(
        pixels, np.full_like(pixels, 255)) > 5 * LINK_PIXELS
        and red_pixels(pixels) > LINK_PIXELS, 'the recorded robot drawn, its arm too')

    # Scrubbed to 3 s by the time slider's number box: the arm has turned.
    slider_id = page.locator('label', has_text='time (s)').get_attribute('for')
    box = page.locator(f'[id="{slider_id}"]').locator('xpath=following::input[1]')
    box.fill('3')
    box.press('Enter')
    turned = wait_for_picture(page, lambda pixels: changed_pixels(pixels, at_start) > LINK_PIXELS,
                              'the arm to turn at 3 s')
    # Back to 1 s: as at the start again.
    box.fill('1')
    box.press('Enter')
    wait_for_picture(page, lambda pixels: changed_pixels(pixels, at_start) < LINK_PIXELS / 10
                     and changed_pixels(pixels, turned) > LINK_PIXELS, 'the arm back at 1 s')
    # Played from the start: it turns by itself once 2 s have passed.
    box.fill('0')
    box.press('Enter')
    wait_for_picture(page, lambda pixels: changed_pixels(pixels, at_start) < LINK_PIXELS / 10,
                     'the arm at the start')
    page.get_by_role('button', name='Play').click()
    wait_for_picture(page, lambda pixels: changed_pixels(pixels, turned) < LINK_PIXELS / 10,
                     'the arm to turn while playing')

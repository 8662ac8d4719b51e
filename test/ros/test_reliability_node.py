"""Reliability of the running node over real DDS: fuzzed input, attacks, reload storms, clocks.

The node runs in its own process (conftest.NodeProcess) on test/fixtures/reliability_robot.urdf,
which has every joint type: floating and planar joints for MultiDOFJointState, a mimic chain,
fixed joints and a sensor. Tests marked `slow` run with --run-slow only (test/pytest_slow.py).

Tests that count what the node received, or that must know a message arrived, send joint states
over a path that cannot lose them (`lossless`): RELIABLE and as deep as what they send, at both
ends (the node's default is best effort, 5 deep).
"""

from __future__ import annotations

from collections.abc import Callable
import math
from pathlib import Path
import random
import threading
import time

from builtin_interfaces.msg import Time
from call_count import python_steps
from geometry_msgs.msg import Twist, Wrench
from lxml import etree
from node_fixtures import (
    assert_pose,
    BEST_EFFORT,
    BILLION,
    children,
    deeper,
    joint_state,
    Link,
    multi_dof_state,
    node_link_fixture,
    Probe,
    q_axis,
    RELIABLE,
    set_stamp,
    stamp_of,
    transform,
    wait_for_log,
    Y_AXIS,
    Z_AXIS,
)
import pytest
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, MultiDOFJointState
from std_msgs.msg import String
from test_reliability_loader import (
    attack_documents,
    chain_text,
    FifoWatch,
    http_server,  # noqa: F401 - a fixture used by the tests below
    SECRET,
    secret_file,  # noqa: F401 - a fixture used by the tests below
)
from tf2_msgs.msg import TFMessage

from urdf_state_publisher import RobotModel
from urdf_state_publisher.engine.parameters import NodeConfig
from urdf_state_publisher.ros.qos import LATCHED_QOS, TF_QOS

ROBOT_URDF = Path(__file__).resolve().parents[1] / 'fixtures' / 'reliability_robot.urdf'
ROBOT_TEXT = ROBOT_URDF.read_text()
MODEL = RobotModel.from_urdf(ROBOT_TEXT)

TF_RECORD = deeper(TF_QOS, 1000)  # the fuzzing's bursts of /tf, all kept
STARTUP_S = 30.0
REPLY_S = 60.0  # for a set_parameters reply (a 50 MB description takes a while)
EXACT = 1e-12  # the tolerance of every pose check here


# --------------------------------------------------------------------------- helpers

def quaternion_norm_error(stamped) -> float:
    r = stamped.transform.rotation
    return abs(math.sqrt(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w) - 1.0)


def unsound(messages) -> list[str]:
    """Transforms with a non-finite number or a quaternion that is not of unit length."""
    problems = []
    for message in messages:
        for stamped in message.transforms:
            t, r = stamped.transform.translation, stamped.transform.rotation
            numbers = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
            if not all(math.isfinite(v) for v in numbers):
                problems.append(f'{stamped.child_frame_id}: non-finite {numbers}')
            elif quaternion_norm_error(stamped) >= 1e-9:
                problems.append(f'{stamped.child_frame_id}: |q| - 1 = '
                                f'{quaternion_norm_error(stamped):.3g}')
    return problems


def pairs(message) -> set[tuple[str, str]]:
    return {(t.header.frame_id, t.child_frame_id) for t in message.transforms}


def movable_pairs(model: RobotModel) -> set[tuple[str, str]]:
    return {(model.joint(n).parent, model.joint(n).child) for n in model.movable_joints}


def scalar_pairs(model: RobotModel) -> frozenset[tuple[str, str]]:
    return frozenset((model.joint(n).parent, model.joint(n).child) for n in model.scalar_joints)


def static_pairs(model: RobotModel) -> set[tuple[str, str]]:
    return {(s.parent, s.child) for s in model.static_transforms()}


def lossless(depth: int) -> tuple[dict, QoSProfile]:
    """Joint-state subscriptions (qos_overrides of the node) and publishers (QoS) that lose
    nothing: RELIABLE, and KEEP_LAST no shorter than what a test sends."""
    return ({'qos_overrides': {topic: {'subscription': {'reliability': 'reliable', 'depth': depth}}
                               for topic in ('/joint_states', '/multi_dof_joint_states')}},
            deeper(RELIABLE, depth))


@pytest.fixture
def start_link(start_node, probe) -> Callable[..., Link]:
    """Start a node (on the reliability robot unless told otherwise) and link to it; with
    `lossless_depth`, joint states go to it as `lossless` says."""
    def start(parameters: dict | None = None, name: str = 'reliability_node',
              timeout: float = STARTUP_S, lossless_depth: int = 0, **overrides) -> Link:
        parameters = dict(parameters or {'robot_description': ROBOT_TEXT}, **overrides)
        source_qos = BEST_EFFORT
        if lossless_depth:
            subscriptions, source_qos = lossless(lossless_depth)
            parameters.update(subscriptions)
        link = Link(probe, start_node(parameters, node_name=name), name=name,
                    tf_qos=TF_RECORD, record_static=True, source_qos=source_qos)
        link.wait_ready(timeout)
        return link

    return start


# --------------------------------------------------------------------------- 3. fuzzing

SEED = 20240611
NOW_SEC = 1_750_000_000  # a fixed 'now' for the stamps, so that every run sends the same
INT32 = 2**31 - 1
SPECIAL = [math.nan, -math.nan, math.inf, -math.inf, 1e300, -1e300, 0.0, -0.0, 5e-324, 1e-300,
           2 * math.pi, 1e6]


def random_number(rng: random.Random) -> float:
    roll = rng.random()
    if roll < 0.4:
        return rng.uniform(-4, 4)
    if roll < 0.8:
        return rng.choice(SPECIAL)
    return rng.choice((-1, 1)) * 10 ** rng.uniform(-300, 300)


def random_stamp(rng: random.Random) -> int:
    sec = rng.choice([0, 0, 1, NOW_SEC, NOW_SEC + rng.randint(-5, 5), INT32, -INT32 - 1,
                      rng.randint(-INT32 - 1, INT32)])
    nanosec = rng.choice([0, 0, 999_999_999, 2**32 - 1, rng.randrange(2**32)])
    return sec * BILLION + nanosec


class Fuzzer:
    """Random JointStates and MultiDOFJointStates for MODEL, from one seed."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        alphabet = 'abcxyz_0123456789/é ✓\t'
        self.strangers = [''.join(self.rng.choice(alphabet) for _ in range(self.rng.randint(
            0, 30))) for _ in range(150)] + ['', ' ', 'x' * 5000, 'arm_joint ', 'ARM_JOINT']
        self.joints = [j.name for j in MODEL.description.joints]

    def name(self) -> str:
        return self.rng.choice(self.joints) if self.rng.random() < 0.7 else self.rng.choice(
            self.strangers)

    def length(self, around: int) -> int:
        return max(0, around + self.rng.choice([0, 0, 0, 0, -1, 1, -3, 4]))

    def joint_state(self) -> JointState:
        rng = self.rng
        n = rng.choice([0, 1, 2, 3, 7, 7, 12, 40, 300])
        names = [self.name() for _ in range(n)]
        if names and rng.random() < 0.2:
            names.append(rng.choice(names))  # a duplicate
        message = JointState(
            name=names,
            position=[random_number(rng) for _ in range(self.length(len(names)))],
            velocity=[random_number(rng) for _ in range(rng.choice([0, len(names), 3]))],
            effort=[random_number(rng) for _ in range(rng.choice([0, len(names), 1]))])
        set_stamp(message.header, random_stamp(rng))
        message.header.frame_id = rng.choice(['', 'base_link', 'x' * 300])
        return message

    def multi_dof_state(self) -> MultiDOFJointState:
        rng = self.rng
        names = [rng.choice(['float_joint', 'planar_joint', 'float_joint', 'planar_joint',
                             'arm_joint', 'bumper_joint']) if rng.random() < 0.8
                 else self.name() for _ in range(rng.choice([0, 1, 2, 2, 3, 6]))]
        transforms = []
        for _ in range(self.length(len(names))):
            if rng.random() < 0.5:
                rotation = (rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1),
                            rng.uniform(-1, 1))
            else:
                rotation = tuple(random_number(rng) for _ in range(4))
            if rng.random() < 0.05:
                rotation = (0.0, 0.0, 0.0, 0.0)
            transforms.append(transform([random_number(rng) for _ in range(3)], rotation))
        message = MultiDOFJointState(
            joint_names=names, transforms=transforms,
            twist=[Twist() for _ in range(rng.choice([0, len(names)]))],
            wrench=[Wrench() for _ in range(rng.choice([0, 1]))])
        set_stamp(message.header, random_stamp(rng))
        return message


FUZZ_RATE = 700.0  # messages per second: about what the node takes, so no long backlog


def run_fuzz(link: Link, joint_states: int, multi_dof_states: int) -> dict:
    """Publish the fuzzed messages (paced), then wait until the node counted every JointState.

    Over a lossless path: the node must receive each one, and does so in order.
    """
    fuzzer = Fuzzer(SEED)
    total = joint_states + multi_dof_states
    sent = 0
    start = time.monotonic()
    for k in range(total):
        if fuzzer.rng.random() < multi_dof_states / total:
            link.publisher(multi_dof=True).publish(fuzzer.multi_dof_state())
        else:
            link.publisher().publish(fuzzer.joint_state())
            sent += 1
        while time.monotonic() < start + (k + 1) / FUZZ_RATE:
            link.probe.spin(0.0005)
    link.probe.wait_until(lambda: link.received_joint_states() >= sent, 60,
                          f'the node to count the {sent} JointStates sent')
    return {'messages': total, 'seconds': time.monotonic() - start,
            'joint_states_sent': sent, 'received_joint_states': link.received_joint_states()}


def check_after_fuzz(link: Link) -> None:
    """A valid state with a fresh stamp, then a later one: both published, exactly right."""
    assert link.process.running(), link.log()[-2000:]
    # Fuzz stamps went up to 2038: a fresh stamp is "time moved backwards", which must
    # reset the rate-limit memory rather than drop everything until 2038.
    first = (NOW_SEC + 60) * BILLION
    values = {'arm_joint': 0.4, 'slide_joint': 0.25, 'finger_joint': 0.3, 'wheel_joint': 1.0}
    message = link.publish_until_tf(link.publisher(), joint_state(first, values),
                                    lambda m: m.transforms and stamp_of(m.transforms[0]) == first)
    moved = {t.child_frame_id: t for t in message.transforms}
    assert set(moved) == {'arm_link', 'slide_link', 'finger_link', 'finger_mirror_link',
                          'wheel_link', 'wheel_follower_link', 'wheel_follower2_link'}
    assert_pose(moved['arm_link'], ((0, 0, 0.3), q_axis(Z_AXIS, 0.4)), EXACT)
    assert_pose(moved['slide_link'], ((0.45, 0, 0), (0, 0, 0, 1)), EXACT)
    assert_pose(moved['finger_link'], ((0.05, 0.02, 0), q_axis(Z_AXIS, 0.3)), EXACT)
    assert_pose(moved['finger_mirror_link'], ((0.05, -0.02, 0), q_axis(Z_AXIS, -0.2)), EXACT)
    assert_pose(moved['wheel_link'], ((0, 0.2, 0), q_axis(Y_AXIS, 1.0)), EXACT)
    assert_pose(moved['wheel_follower_link'], ((0, -0.2, 0), q_axis(Y_AXIS, 2.0)), EXACT)
    assert_pose(moved['wheel_follower2_link'], ((0, -0.1, 0), q_axis(Y_AXIS, -0.75)), EXACT)

    later = first + BILLION // 10
    message = link.publish_until_tf(
        link.publisher(), joint_state(later, {'arm_joint': -0.2}),
        lambda m: m.transforms and stamp_of(m.transforms[0]) == later)
    assert [t.child_frame_id for t in message.transforms] == ['arm_link']
    assert_pose(message.transforms[0], ((0, 0, 0.3), q_axis(Z_AXIS, -0.2)), EXACT)

    pose_stamp = later + BILLION // 10
    yaw = 0.3
    entries = {'float_joint': ((1, 2, 3), (0, 0, 0, 1)),
               'planar_joint': ((0.5, 0.2, 0.7), q_axis(Z_AXIS, 0.6))}
    message = link.publish_until_tf(
        link.publisher(multi_dof=True), multi_dof_state(pose_stamp, entries),
        lambda m: m.transforms and stamp_of(m.transforms[0]) == pose_stamp)
    moved = {t.child_frame_id: t for t in message.transforms}
    c, s = math.cos(yaw), math.sin(yaw)
    assert_pose(moved['base_link'], ((c * 1 - s * 2, s * 1 + c * 2, 3.5), q_axis(Z_AXIS, yaw)),
                EXACT)
    # planar: only the in-plane translation and the rotation about z survive
    assert_pose(moved['cart_link'], ((0.6, 0.2, 0.0), q_axis(Z_AXIS, 0.6)), EXACT)


def check_node_log(link: Link) -> None:
    log = link.log()
    assert 'Traceback' not in log
    for failure in ('failed to process', 'internal error'):
        assert failure not in log, [line for line in log.splitlines() if failure in line][:5]


FUZZ_JOINT_STATES = 2500
FUZZ_MULTI_DOF = 700


def fuzz_test(link: Link, joint_states: int, multi_dof: int) -> None:
    figures = run_fuzz(link, joint_states, multi_dof)
    assert link.process.running(), link.log()[-3000:]
    # Every JointState reached the node: none was lost on the way, none counted twice.
    assert figures['received_joint_states'] == figures['joint_states_sent']
    tf_during_fuzz = len(link.tf)
    assert tf_during_fuzz > 0, 'the fuzzing put nothing on /tf: nothing was checked'
    check_after_fuzz(link)  # its last MultiDOFJointState comes after every fuzzed one
    check_node_log(link)
    problems = unsound(link.tf)
    assert not problems, problems[:10]
    strays = set().union(*(pairs(m) for m in link.tf)) - movable_pairs(MODEL)
    assert not strays, f'/tf frames that are no movable joint of the model: {strays}'
    print(f'\nfuzz: {figures}, /tf messages during the fuzz: {tf_during_fuzz}')


def test_fuzzed_joint_states_keep_the_node_up_and_tf_sound(start_link) -> None:
    link = start_link(publish_frequency=1000.0,
                      lossless_depth=FUZZ_JOINT_STATES + FUZZ_MULTI_DOF + 100)
    fuzz_test(link, FUZZ_JOINT_STATES, FUZZ_MULTI_DOF)


@pytest.mark.slow
def test_fuzzed_joint_states_long(start_link) -> None:
    link = start_link(publish_frequency=1000.0,
                      lossless_depth=20 * (FUZZ_JOINT_STATES + FUZZ_MULTI_DOF) + 100)
    fuzz_test(link, 20 * FUZZ_JOINT_STATES, 20 * FUZZ_MULTI_DOF)


UNKNOWN_BURST = 2000  # JointStates, each with a name of its own that the robot does not have
SHARED_SUBSCRIPTIONS, SHARED_SOURCE = lossless(UNKNOWN_BURST + 100)
shared_node = node_link_fixture(
    'reliability_shared', {'robot_description': ROBOT_TEXT, 'publish_frequency': 1000.0,
                           **SHARED_SUBSCRIPTIONS},
    fixture='shared_node', scope='class', ready_timeout=STARTUP_S, tf_qos=TF_RECORD,
    record_static=True, source_qos=SHARED_SOURCE)


class TestOneNodeAt1000Hz:
    """Tests that leave the node as they found it share one node (started as start_link does:
    the reliability robot at publish_frequency 1000, with lossless joint states); each has
    stamps of its own."""

    @pytest.fixture
    def link(self, shared_node) -> Link:
        shared_node.begin()
        return shared_node

    def test_extreme_joint_values_never_reach_tf(self, link) -> None:
        """1.8e308 to a continuous leader with a x2 follower: dropped, not published as NaN.

        The arm in the same state is published: the state arrived and was processed.
        """
        big = 1.7976931348623157e308
        stamp = (NOW_SEC + 10) * BILLION
        message = link.publish_until_tf(
            link.publisher(), joint_state(stamp, {'wheel_joint': big, 'arm_joint': 0.1}),
            lambda m: stamp_of(m.transforms[0]) == stamp)
        assert children(message) == {'arm_link'}
        assert_pose(message.transforms[0], ((0, 0, 0.3), q_axis(Z_AXIS, 0.1)), EXACT)
        message = link.publish_until_tf(
            link.publisher(), joint_state(stamp + BILLION, {'arm_joint': 0.2}),
            lambda m: stamp_of(m.transforms[0]) == stamp + BILLION)
        assert_pose(message.transforms[0], ((0, 0, 0.3), q_axis(Z_AXIS, 0.2)), EXACT)
        assert not unsound(link.tf), unsound(link.tf)

    def test_extreme_multi_dof_translation_never_reaches_tf(self, link) -> None:
        """1.7e308 to the floating joint overflows on its origin: that entry is dropped.

        The planar joint in the same message is published: the message arrived.
        """
        big = 1.7e308
        stamp = (NOW_SEC + 20) * BILLION
        message = link.publish_until_tf(
            link.publisher(multi_dof=True),
            multi_dof_state(stamp, {'float_joint': ((big, big, big), (0, 0, 0, 1)),
                                    'planar_joint': ((0.2, 0.3, 0), (0, 0, 0, 1))}),
            lambda m: stamp_of(m.transforms[0]) == stamp)
        assert pairs(message) == {('base_link', 'cart_link')}
        assert_pose(message.transforms[0], ((0.3, 0.3, 0), (0, 0, 0, 1)), EXACT)
        later = stamp + BILLION
        link.publish_until_tf(
            link.publisher(multi_dof=True),
            multi_dof_state(later, {'planar_joint': ((0, 0, 0), (0, 0, 0, 1))}),
            lambda m: stamp_of(m.transforms[0]) == later)
        assert not unsound(link.tf), unsound(link.tf)

    def test_unknown_names_do_not_grow_diagnostics_and_log_without_bound(self, link) -> None:
        def unknown(values: dict) -> list[str]:
            """The unknown names in a status: those listed, and one '' per name only counted."""
            text = values['unknown joint names']
            listed, _, more = text.partition(' and ')
            names = listed.split(', ') if listed else []
            return names + [''] * (int(more.removesuffix(' more')) if more else 0)

        publisher = link.publisher()
        # Once this state is on /tf, all sent before it have been counted (lossless, in order).
        base = (NOW_SEC + 30) * BILLION
        link.publish_and_expect(publisher, joint_state(base, {'arm_joint': 0.1}))
        now = time.time()
        before = link.wait_for_diagnostics(lambda v: v['_stamp'] > now, 10)
        for k in range(UNKNOWN_BURST):
            name = f'stranger_{k:05d}_{"x" * 20}'
            publisher.publish(joint_state(base + (k + 1) * 2_000_000,
                                          {name: 0.0, 'arm_joint': 0.1}))
            if k % 4 == 3:
                link.probe.spin(0.001)
        received = int(before['joint_states received']) + UNKNOWN_BURST
        after = link.wait_for_diagnostics(
            lambda v: int(v['joint_states received']) >= received, 60,
            f'the node to count the {UNKNOWN_BURST} states')
        listed = after['unknown joint names']
        logged = link.new_log().count('does not have')
        print(f'\n{UNKNOWN_BURST} new names: /diagnostics value of {len(listed)} characters, '
              f'{logged} log lines')
        # Every name arrived (and no other state): the bound is met with all of them.
        assert int(after['joint_states received']) == received
        assert len(unknown(after)) - len(unknown(before)) == UNKNOWN_BURST
        assert len(listed) < 4096
        assert logged < 100

    def test_xml_attacks_at_runtime_are_rejected_and_leak_nothing(
            self, link, secret_file, http_server, tmp_path) -> None:  # noqa: F811 - fixtures
        url, hits = http_server
        hits.clear()
        timings = {}
        with FifoWatch(tmp_path) as fifo:
            attacks = runtime_attacks(secret_file.as_uri(), fifo.path.as_uri(), url)
            for name, (document, phrase) in attacks.items():
                start = time.monotonic()
                result = link.set_parameters(REPLY_S, robot_description=document)[0]
                timings[name] = (round(time.monotonic() - start, 3), len(result.reason))
                assert SECRET not in result.reason
                if phrase is None:
                    assert result.successful, (name, result.reason[:300])
                    assert link.set_parameters(REPLY_S, robot_description=ROBOT_TEXT)[0].successful
                    continue
                assert not result.successful, name
                assert phrase in result.reason, (name, result.reason[:300])
                assert hits == [] and not fifo.opened, name
        print(f'\nruntime attacks (seconds, reason length): {timings}')
        assert link.get_parameter('robot_description') == ROBOT_TEXT
        # Accepted, and harmless: XInclude is not processed.
        xinclude = attack_documents(secret_file.as_uri(), '', url)['xinclude']
        assert link.set_parameters(REPLY_S, robot_description=xinclude)[0].successful
        assert link.set_parameters(REPLY_S, robot_description=ROBOT_TEXT)[0].successful
        assert hits == []
        stamp = (NOW_SEC + 40) * BILLION
        message = link.publish_until_tf(link.publisher(), joint_state(stamp, {'arm_joint': 0.7}),
                                        lambda m: stamp_of(m.transforms[0]) == stamp)
        assert_pose(message.transforms[0], ((0, 0, 0.3), q_axis(Z_AXIS, 0.7)), EXACT)
        assert link.process.running()
        assert SECRET not in link.log()
        check_node_log(link)


# --------------------------------------------------------------------------- 2. attacks at runtime

def runtime_attacks(secret_uri: str, fifo_uri: str,
                    http_url: str) -> dict[str, tuple[str, str | None]]:
    """Documents sent as a runtime robot_description, with the phrase their refusal carries.

    None for a document that is accepted: its declarations are skipped as robot_state_publisher
    skips them, nothing they name is expanded or read.
    """
    documents = attack_documents(secret_uri, fifo_uri, http_url)
    chosen = {name: documents[name] for name in (
        'billion-laughs', 'quadratic-blowup', 'parameter-entity-bomb', 'external-entity-file',
        'external-entity-fifo', 'external-entity-http', 'external-parameter-entity',
        'external-dtd-file', 'external-dtd-http', 'public-dtd-http', 'deep-nesting')}
    expected: dict[str, str | None] = {name: None for name in chosen}
    expected['deep-nesting'] = 'levels deep'
    head = '<robot name="reliability_robot">'
    chosen['50MB-comment'] = ROBOT_TEXT.replace(head, head + '<!--' + 'c' * 50_000_000 + '-->')
    expected['50MB-comment'] = 'more than the 32 MiB'
    chosen['10k-link-cycle'] = chain_text(10_000, cycle=True)
    expected['10k-link-cycle'] = 'cycle'
    chosen['empty'] = ''
    expected['empty'] = 'must not be empty'
    return {name: (chosen[name], expected[name]) for name in chosen}


def test_attacks_on_the_description_topic_are_ignored_and_leak_nothing(
        start_node, probe, secret_file, http_server, tmp_path) -> None:  # noqa: F811
    node = start_node({'use_robot_description_topic': True}, node_name='topic_node')
    url, hits = http_server
    hits.clear()
    publisher = probe.node.create_publisher(String, 'robot_description', LATCHED_QOS)
    static = probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    probe.wait_until(lambda: publisher.get_subscription_count() > 0, STARTUP_S,
                     'the node to subscribe to robot_description')
    documents = attack_documents(secret_file.as_uri(), '', url)
    # Declarations that are read and never expanded, in descriptions refused for their end.
    refused = {name: documents[name].replace('</robot>', '') for name in (
        'billion-laughs', 'external-entity-file', 'external-dtd-http')}
    for count, name in enumerate(refused, start=1):
        publisher.publish(String(data=refused[name]))
        probe.wait_until(lambda c=count: node.output().count('ignoring the robot description')
                         >= c, 10, f'the node to refuse {name}')
    assert not static
    publisher.publish(String(data=ROBOT_TEXT))
    probe.wait_until(lambda: static, 10, '/tf_static once a valid description arrives')
    assert {(t.header.frame_id, t.child_frame_id) for t in static[-1].transforms} == \
        static_pairs(MODEL)
    assert SECRET not in node.output()
    assert hits == []


# --------------------------------------------------------------------------- 4. reload storm

def variant_without_bumper_and_slide(text: str) -> str:
    """The robot with links removed: bumper_link and the slide/finger subtree."""
    root = etree.fromstring(text.encode())
    removed = {'bumper_link', 'slide_link', 'finger_link', 'finger_mirror_link'}
    for element in list(root):
        if not isinstance(element.tag, str):
            continue
        if element.tag == 'link' and element.get('name') in removed:
            root.remove(element)
        elif element.tag == 'joint' and element.find('child').get('link') in removed:
            root.remove(element)
    return etree.tostring(root, encoding='unicode')


def variant_renamed(text: str, suffix: str = '_v3') -> str:
    """The robot with every link renamed (joint names unchanged)."""
    root = etree.fromstring(text.encode())
    for element in root.iter('link'):
        element.set('name', element.get('name') + suffix)
    for element in root.iter('parent', 'child'):
        element.set('link', element.get('link') + suffix)
    return etree.tostring(root, encoding='unicode')


def storm_invalid(secret_uri: str) -> list[tuple[str, str]]:
    """Invalid descriptions and the phrase their rejection carries."""
    return [
        (ROBOT_TEXT.replace('</robot>', ''), 'is not closed'),
        (attack_documents(secret_uri, '', 'http://127.0.0.1:9')['external-entity-file']
         .replace('</robot>', '</robt>'), 'does not match'),
        (ROBOT_TEXT.replace('<child link="arm_link"/>', '<child link="world"/>'),
         'kinematic cycle'),
        (ROBOT_TEXT.replace('<mimic joint="wheel_joint" multiplier="2"/>',
                            '<mimic joint="wheel_follower2_joint" multiplier="2"/>'),
         'mimic cycle'),
        (ROBOT_TEXT.replace('<parent link="slide_link"/>', '<parent link="gone"/>', 1),
         'does not exist'),
        ('', 'must not be empty'),
        (ROBOT_TEXT.replace('type="prismatic"', 'type="telescopic"'), 'unknown type'),
    ]


class Streamer:
    """Publishes JointStates naming every joint of every version at `rate` Hz, in a thread.

    Stamps are synthetic and strictly 1/rate apart, so that no joint is ever rate-limited
    and each /tf message holds every single-value joint of the model then active.
    """

    def __init__(self, names: list[str], rate: float):
        self.probe = Probe('storm_source')
        self.publisher = self.probe.node.create_publisher(
            JointState, 'joint_states', BEST_EFFORT)
        self.names, self.period = names, 1.0 / rate
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        stamp = (NOW_SEC + 100) * BILLION
        step = int(self.period * BILLION)
        next_time = time.monotonic()
        while not self._stop.is_set():
            values = {n: 0.1 * math.sin(self.sent * 0.01 + k) for k, n in enumerate(self.names)}
            self.publisher.publish(joint_state(stamp + self.sent * step, values))
            self.sent += 1
            next_time += self.period
            delay = next_time - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def __enter__(self) -> Streamer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.probe.close()


def reload_storm(link: Link, secret_uri: str, changes: int) -> None:
    versions = {
        'original': ROBOT_TEXT,
        'links removed': variant_without_bumper_and_slide(ROBOT_TEXT),
        'links renamed': variant_renamed(ROBOT_TEXT),
    }
    models = {name: RobotModel.from_urdf(text) for name, text in versions.items()}
    sets = {name: scalar_pairs(model) for name, model in models.items()}
    assert len(set(sets.values())) == 3
    invalid = storm_invalid(secret_uri)
    names = sorted({n for model in models.values() for n in model.scalar_joints})
    # the last valid change (k = changes - 2) is 'links removed', for the late /tf_static check
    order = ['links renamed', 'links removed', 'original']
    outcomes = {'valid': 0, 'invalid': 0}
    slowest = 0.0
    with Streamer(names, rate=500.0) as streamer:
        # The storm takes well under a second: it must start with the stream already flowing.
        link.probe.wait_until(lambda: link.tf, 30, 'the stream on /tf before the storm')
        for k in range(changes):
            if k % 2 == 0:
                version = order[(k // 2) % 3]
                # a comment makes every valid text new, so each one really reloads
                text = versions[version].replace('</robot>', f'<!-- change {k} --></robot>')
                start = time.monotonic()
                result = link.set_parameters(REPLY_S, robot_description=text)[0]
                assert result.successful, (version, result.reason)
                outcomes['valid'] += 1
            else:
                text, phrase = invalid[(k // 2) % len(invalid)]
                start = time.monotonic()
                result = link.set_parameters(REPLY_S, robot_description=text)[0]
                assert not result.successful and phrase in result.reason, (phrase, result.reason)
                assert SECRET not in result.reason
                outcomes['invalid'] += 1
            slowest = max(slowest, time.monotonic() - start)
            link.probe.spin(0.005)
        final = version
        assert final == 'links removed'
        link.probe.spin_for(0.3)
        sent = streamer.sent
    link.probe.spin_for(0.3)

    per_version = dict.fromkeys(sets, 0)
    for message in link.tf:
        matching = [name for name, expected in sets.items() if pairs(message) == expected]
        assert len(matching) == 1, f'a /tf message of no single model version: {pairs(message)}'
        per_version[matching[0]] += 1
    assert not unsound(link.tf)
    # /tf messages came from every version, so atomicity was checked across the reloads
    assert all(per_version.values()), per_version
    # the stream outlived the storm: its last messages are of the final model
    assert pairs(link.tf[-1]) == sets[final]
    print(f'\nreload storm: {outcomes}, slowest set_parameters {slowest:.3f} s, '
          f'{sent} joint states sent, /tf messages per version {per_version}')

    # A new, late /tf_static subscriber gets the final model's complete static set only.
    late = link.probe.record(TFMessage, '/tf_static', LATCHED_QOS)
    link.probe.wait_until(lambda: late, 10, 'the latched /tf_static')
    link.probe.spin_for(0.3)
    assert len(late) == 1
    assert pairs(late[0]) == static_pairs(models[final])
    description = link.probe.record(String, 'robot_description', LATCHED_QOS)
    link.probe.wait_until(lambda: description, 10, 'the latched robot_description')
    assert description[-1].data == link.get_parameter('robot_description')
    assert link.process.running()
    assert SECRET not in link.log()
    check_node_log(link)


def test_reload_storm_applies_each_valid_change_atomically(start_link, secret_file) -> None:  # noqa: F811
    link = start_link(publish_frequency=1000.0)
    reload_storm(link, secret_file.as_uri(), changes=100)


@pytest.mark.slow
def test_reload_storm_long(start_link, secret_file) -> None:  # noqa: F811
    link = start_link(publish_frequency=1000.0)
    reload_storm(link, secret_file.as_uri(), changes=1000)


# --------------------------------------------------------------------------- 5. clock faults

def clock(seconds: float) -> Clock:
    sec, nanosec = divmod(int(round(seconds * BILLION)), BILLION)
    return Clock(clock=Time(sec=sec, nanosec=nanosec))


def test_sim_clock_jumping_back_and_forth_keeps_publishing(start_link) -> None:
    link = start_link(use_sim_time=True, publish_frequency=50.0)
    clock_publisher = link.probe.node.create_publisher(Clock, '/clock', 10)
    link.probe.wait_until(lambda: clock_publisher.get_subscription_count() > 0, 10,
                          'the node to subscribe to /clock')

    def at_sim_time(seconds: float, angle: float) -> TFMessage:
        """Set the sim clock; an unstamped state must then be published at that time."""
        expected = int(round(seconds * BILLION))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            clock_publisher.publish(clock(seconds))
            link.publisher().publish(joint_state(0, {'arm_joint': angle}))
            link.probe.spin_for(0.05)
            matches = [m for m in link.tf if stamp_of(m.transforms[0]) == expected]
            if matches:
                return matches[0]
        pytest.fail(f'no /tf stamped with sim time {seconds} in 30 s')

    for seconds, angle in ((1000.0, 0.1), (500.0, 0.2), (1_000_000.0, 0.3), (3.5, 0.4),
                           (2_000_000_000.0, 0.5), (7.25, 0.6)):
        message = at_sim_time(seconds, angle)
        assert_pose(message.transforms[0], ((0, 0, 0.3), q_axis(Z_AXIS, angle)), EXACT)

    # Explicitly stamped states keep being published across the jumps.
    for stamp in (10 * BILLION, 5 * BILLION, 11 * BILLION):
        link.publish_until_tf(link.publisher(), joint_state(stamp, {'arm_joint': 0.0}),
                              lambda m, s=stamp: stamp_of(m.transforms[0]) == s)

    # /tf_static is stamped from the sim clock when a reload publishes it: once a state is
    # stamped with `seconds`, the node's clock reads it (the test publishes no other time).
    for seconds, angle in ((1234.5, 0.7), (42.0, 0.8)):
        at_sim_time(seconds, angle)
        count = len(link.static)
        text = ROBOT_TEXT.replace('</robot>', f'<!-- at {seconds} --></robot>')
        assert link.set_parameters(REPLY_S, robot_description=text)[0].successful
        link.probe.wait_until(lambda c=count: len(link.static) > c, 10, 'the new /tf_static')
        stamps = {stamp_of(t) for t in link.static[-1].transforms}
        assert stamps == {int(seconds * BILLION)}
    assert not unsound(link.tf)
    assert link.process.running()
    check_node_log(link)


def test_restarting_joint_state_source_keeps_publishing(start_link) -> None:
    # 20 ms between publications of a joint; every state reaches the node.
    link = start_link(publish_frequency=50.0, lossless_depth=200)
    step = 10_000_000

    def phase(first_ns: int, count: int = 30) -> list[int]:
        stamps = [first_ns + k * step for k in range(count)]
        for k, stamp in enumerate(stamps):
            link.publisher().publish(joint_state(stamp, {'arm_joint': 0.01 * k}))
        return stamps

    phases = {
        'running': phase(100 * BILLION),
        'restart from 0': phase(0),           # the first is unstamped (0): receipt time
        'later': phase(50 * BILLION),
        'jump back 5 s': phase(45 * BILLION),
    }
    link.expect(phases['jump back 5 s'][28], timeout=30)  # the last one due
    published = {stamp_of(t) for m in link.tf for t in m.transforms}
    # 10 ms apart at a 20 ms rate limit: every other one, from the first of each phase. After
    # the unstamped one (published at its time of receipt, long after 10 ms), 10 ms is time
    # going backwards: the limit starts again there.
    expected = {'running': phases['running'][0::2],
                'restart from 0': phases['restart from 0'][1::2],
                'later': phases['later'][0::2],
                'jump back 5 s': phases['jump back 5 s'][0::2]}
    for name, stamps in phases.items():
        assert sorted(published.intersection(stamps)) == expected[name], name
    # The node logs what the period's assessment found (at most 1 s later).
    wait_for_log(link.process, link.probe, 'moved backwards', timeout=15.0)
    assert link.process.running()
    check_node_log(link)


# --------------------------------------------------------------------------- big models

def test_node_starts_with_a_10000_link_chain(start_link) -> None:
    text = chain_text(10_000, every=10)  # 999 continuous joints, 9000 fixed
    start = time.monotonic()
    link = start_link({'robot_description': text}, name='chain_node', timeout=120)
    started = time.monotonic() - start
    model = RobotModel.from_urdf(text)
    assert pairs(link.static[-1]) == static_pairs(model)
    assert len(link.static[-1].transforms) == 9000
    few = {f'joint_{i}': 0.1 for i in range(9, 100, 10)}
    stamp = (NOW_SEC + 50) * BILLION
    message = link.publish_until_tf(link.publisher(), joint_state(stamp, few),
                                    lambda m: stamp_of(m.transforms[0]) == stamp)
    assert children(message) == {f'link_{i + 1}' for i in range(9, 100, 10)}
    everything = {n: 0.001 * k for k, n in enumerate(model.scalar_joints)}
    start = time.monotonic()
    message = link.publish_until_tf(link.publisher(), joint_state(stamp + BILLION, everything),
                                    lambda m: stamp_of(m.transforms[0]) == stamp + BILLION,
                                    timeout=60)
    first_full = time.monotonic() - start
    assert pairs(message) == movable_pairs(model)
    assert len(message.transforms) == 999
    assert not unsound(link.tf) and not unsound(link.static)
    print(f'\n10k-link chain: node up with /tf_static (9000 transforms) in {started:.2f} s, '
          f'first /tf of all 999 joints after {first_full:.2f} s')


@pytest.mark.slow
def test_tf_template_is_built_in_linear_time() -> None:
    from urdf_state_publisher.wire.tf import TransformTemplate

    def build(n: int) -> Callable[[], object]:
        frames = [(f'link_{i}', f'link_{i + 1}') for i in range(n)]
        return lambda: TransformTemplate(frames)

    ratio = python_steps(build(8000)) / python_steps(build(1000))
    # linear: 8x; quadratic: 64x
    assert ratio < 16, f'8x the frames took {ratio:.1f}x the steps'


# --------------------------------------------------------------------------- parameters

@pytest.mark.parametrize('frequency', [1e-10, 1e-300])
def test_tiny_publish_frequency_is_accepted_with_an_interval_that_cannot_overflow(
        frequency: float) -> None:
    # doc/parameters.md: any positive, finite number of Hz. The interval is added to stamps as
    # int64 ns: with the latest stamp a JointState can carry it must stay below 2**63.
    config = NodeConfig.from_values({'publish_frequency': frequency})
    latest_stamp_ns = INT32 * BILLION + BILLION - 1
    assert 10**18 <= config.publish_interval_ns < 2**63 - latest_stamp_ns

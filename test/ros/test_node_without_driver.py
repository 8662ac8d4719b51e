"""joint_state_publisher's uses over DDS: no driver at all, and its per-joint parameters.

The node runs as joint_state_publisher's users run it: a description, publish_joint_states on,
no source_list. Expected values are written here from the descriptions and parameters the tests
give (joint_state_publisher's own test cases: its mimic chain, a joint name with a slash, its
64-joint robot), and the expected transforms come from node_fixtures' own quaternion algebra.
"""

from __future__ import annotations

import itertools
import statistics

from diagnostic_msgs.msg import DiagnosticStatus
from node_fixtures import (
    assert_pose,
    by_child,
    joint_state,
    Link,
    ns,
    RELIABLE,
    revolute,
    stamp_of,
    wait_until,
)
import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.engine.health import GRACE_S
from urdf_state_publisher.ros.qos import TF_QOS

LIMIT = '<limit lower="{lower}" upper="{upper}" effort="10" velocity="10"/>'


def joint_xml(name: str, parent: str, child: str, *, axis=(1, 0, 0), xyz=(0, 0, 0),
              lower: float = -1.0, upper: float = 1.0, mimic: str = '') -> str:
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{" ".join(map(str, xyz))}"/>'
            f'<axis xyz="{" ".join(map(str, axis))}"/>{mimic}'
            f'{LIMIT.format(lower=lower, upper=upper)}</joint>')


def robot(name: str, links: list[str], joints: list[str]) -> str:
    return (f'<robot name="{name}">' + ''.join(f'<link name="{link}"/>' for link in links)
            + ''.join(joints) + '</robot>')


# Each case: the URDF, then per joint (child link, origin xyz, axis, expected default).
def mimic_chain():
    """j23 = j12 + 0.1, j34 = -1 x j23: at j12's default 0, 0.1 and -0.1."""
    joints = [joint_xml('j12', 'link1', 'link2', axis=(0, 0, 1)),
              joint_xml('j23', 'link2', 'link3', xyz=(0.1, 0, 0), axis=(0, 0, 1),
                        mimic='<mimic joint="j12" offset="0.1"/>'),
              joint_xml('j34', 'link3', 'link4', xyz=(0.1, 0, 0), axis=(0, 1, 0),
                        mimic='<mimic joint="j23" multiplier="-1"/>')]
    expected = {'j12': ('link2', (0, 0, 0), (0, 0, 1), 0.0),
                'j23': ('link3', (0.1, 0, 0), (0, 0, 1), 0.1),
                'j34': ('link4', (0.1, 0, 0), (0, 1, 0), -0.1)}
    return robot('mimic_chain', ['link1', 'link2', 'link3', 'link4'], joints), expected


def slash_fiction():
    """A joint name with a slash; both ranges exclude 0, so both sit mid-range (0.3)."""
    joints = [joint_xml('standard_name', 's1', 's2', lower=0.1, upper=0.5),
              joint_xml('kirk/spock', 's2', 's3', xyz=(0, 0, 0.2), lower=0.1, upper=0.5)]
    expected = {'standard_name': ('s2', (0, 0, 0), (1, 0, 0), 0.3),
                'kirk/spock': ('s3', (0, 0, 0.2), (1, 0, 0), 0.3)}
    return robot('slash_fiction', ['s1', 's2', 's3'], joints), expected


def sixty_four_joints():
    """64 revolute joints in a chain; every fourth range excludes 0 (mid-range 0.6)."""
    joints, expected = [], {}
    for k in range(64):
        axis = [(1, 0, 0), (0, 1, 0), (0, 0, 1)][k % 3]
        lower, upper = (0.2, 1.0) if k % 4 == 0 else (-1.0, 1.0)
        name, child = f'joint{k}', f'c{k + 1}'
        joints.append(joint_xml(name, f'c{k}', child, axis=axis, xyz=(0, 0, 0.05),
                                lower=lower, upper=upper))
        expected[name] = (child, (0, 0, 0.05), axis, (lower + upper) / 2 if lower > 0 else 0.0)
    return robot('sixty_four', [f'c{k}' for k in range(65)], joints), expected


CASES = {'mimic_chain': mimic_chain, 'slash_fiction': slash_fiction,
         'sixty_four_joints': sixty_four_joints}


def record(probe, namespace: str) -> tuple[list[JointState], list[TFMessage]]:
    return (probe.record(JointState, f'/{namespace}/joint_states', RELIABLE),
            probe.record(TFMessage, '/tf', TF_QOS))


def tf_of(messages: list[TFMessage], children: set[str]) -> list[TFMessage]:
    """The /tf messages about `children` (other tests' nodes may still be publishing)."""
    return [m for m in messages if {t.child_frame_id for t in m.transforms} & children]


@pytest.mark.parametrize('case', CASES)
def test_without_a_driver_every_joint_is_published_at_its_default(start_node, probe, case):
    text, expected = CASES[case]()
    node = start_node({'robot_description': text, 'publish_joint_states': True},
                      ('-r', f'__ns:=/{case}'), node_name='no_driver')
    states, tf = record(probe, case)
    children = {child for child, *_ in expected.values()}

    def tf_stamps() -> set[int]:
        return {stamp_of(m.transforms[0]) for m in tf_of(tf, children)}

    def states_while_tf_recorded() -> list[int]:
        """The states stamped from the first /tf recorded to the last: each subscription
        matches the node at its own moment, so only these have their /tf recorded too."""
        stamps = tf_stamps()
        return [stamp_of(s) for s in states
                if stamps and min(stamps) <= stamp_of(s) <= max(stamps)]

    probe.wait_until(lambda: len(states) >= 3 and len(states_while_tf_recorded()) >= 2, 20,
                     f'joint_states and /tf of {case} ({node.output()[-300:]})')

    for state in states:
        assert sorted(state.name) == sorted(expected)
        assert dict(zip(state.name, state.position)) == pytest.approx(
            {name: value for name, (*_, value) in expected.items()}, abs=1e-12)
        assert len(state.velocity) == 0 and len(state.effort) == 0  # none made up
    for message in tf_of(tf, children):
        frames = by_child([message])
        assert set(frames) == children
        for child, xyz, axis, value in expected.values():
            assert_pose(frames[child], revolute(xyz, (0, 0, 0), axis, value))
    # /tf goes out with joint_states, on the same ticks, stamped alike
    assert set(states_while_tf_recorded()) <= tf_stamps()

    link = Link(probe, node, name='no_driver')
    status = link.wait_for_diagnostics(lambda v: True, 10, 'a status')
    assert status['_level'] == DiagnosticStatus.OK
    assert status['_message'] == 'publishing default positions: no joint-state source is ' \
                                 'configured'
    assert status['joint_states output'] == 'default positions (no source configured)'
    assert 'WARN' not in node.output() and 'ERROR' not in node.output()
    # it reads no JointState topic at all
    assert not [i for i in probe.node.get_subscriptions_info_by_topic(f'/{case}/joint_states')
                if i.node_name == 'no_driver']


def test_zeros_dependent_joints_and_rate_change_what_is_published(start_node, probe):
    text, _ = mimic_chain()
    text = text.replace('<mimic joint="j12" offset="0.1"/>', '')  # j23 follows by parameter
    factor, offset, held, rate = -0.5, 0.2, 0.3, 4
    node = start_node({'robot_description': text, 'publish_joint_states': True,
                       'rate': rate, 'zeros': {'j12': held},
                       'dependent_joints': {'j23': {'parent': 'j12', 'factor': factor,
                                                    'offset': offset}}},
                      ('-r', '__ns:=/parameters'), node_name='jsp_parameters')
    states, tf = record(probe, 'parameters')
    probe.wait_until(lambda: len(states) >= 9, 20,
                     f'nine joint_states ({node.output()[-300:]})')

    j23 = factor * held + offset
    expected = {'j12': held, 'j23': j23, 'j34': -1 * j23}  # j34: the URDF's <mimic>
    assert dict(zip(states[-1].name, states[-1].position)) == pytest.approx(expected, abs=1e-12)
    frames = by_child(tf_of(tf, {'link2', 'link3', 'link4'})[-1:])
    assert_pose(frames['link3'], revolute((0.1, 0, 0), (0, 0, 0), (0, 0, 1), j23))
    assert_pose(frames['link4'], revolute((0.1, 0, 0), (0, 0, 0), (0, 1, 0), -j23))
    # stamped with the node's clock, one message per 1/rate (timers keep their schedule)
    intervals = [(stamp_of(b) - stamp_of(a)) / 1e9 for a, b in zip(states, states[1:])]
    assert 0.8 / rate <= statistics.mean(intervals) <= 2.0 / rate, intervals


def test_a_joint_held_by_zeros_is_passive_until_a_source_names_it(start_node, probe):
    text, _ = slash_fiction()
    node = start_node({'robot_description': text, 'publish_joint_states': True,
                       'source_list': ['driver/joint_states'], 'zeros': {'kirk/spock': 0.45}},
                      ('-r', '__ns:=/held'), node_name='held')
    states, tf = record(probe, 'held')
    link = Link(probe, node, name='held')
    driver = probe.node.create_publisher(JointState, '/held/driver/joint_states', RELIABLE)
    probe.wait_until(lambda: driver.get_subscription_count() > 0, 20, 'the node to subscribe')

    # The driver sends the other joint at 20 Hz; past the grace period for joints never
    # received, the held one is listed as held, not as never received, and stays on /tf.
    stamps = itertools.count(ns(50), 50_000_000)

    def drive() -> None:
        driver.publish(joint_state(next(stamps), {'standard_name': 0.2}))
        probe.spin_for(0.05)

    def statuses() -> list[dict]:
        return [{**{kv.key: kv.value for kv in s.values}, '_level': s.level,
                 '_message': s.message} for s in link.diagnostic_statuses()]

    def merged() -> list[dict]:
        found = statuses()
        first = next((k for k, v in enumerate(found)
                      if v['joint_states output'] == 'merged from the sources'), len(found))
        return found[first:]

    link.begin()
    wait_until(lambda: len(merged()) >= GRACE_S + 2, 30, drive, 'the grace period to end')
    status = merged()[-1]
    assert status['_level'] == DiagnosticStatus.OK, status['_message']
    assert status['joints never received'] == ''
    assert status['joints held by zeros (named by no source)'] == 'kirk/spock'
    tf.clear()
    wait_until(lambda: len(tf_of(tf, {'s3'})) >= 2, 10, drive, 'the held joint on /tf')
    assert_pose(by_child(tf_of(tf, {'s3'})[-1:])['s3'],
                revolute((0, 0, 0.2), (0, 0, 0), (1, 0, 0), 0.45))

    # Named by the driver, it is the driver's. (What came before the driver was heard went out
    # at the defaults, stamped with the node's clock: later than any of the driver's stamps.)
    heard = len(states)
    named = next(stamps)
    driver.publish(joint_state(named, {'kirk/spock': 0.15}))
    wait_until(lambda: any(stamp_of(s) >= named for s in states[heard:]), 10, drive,
               'the merged state')
    after = next(s for s in states[heard:] if stamp_of(s) >= named)
    assert dict(zip(after.name, after.position)) == pytest.approx(
        {'standard_name': 0.2, 'kirk/spock': 0.15}, abs=1e-12)
    wait_until(lambda: statuses()[-1]['joints held by zeros (named by no source)'] == '', 10,
               drive, 'the joint named')
    assert 'WARN' not in node.output()


def test_without_a_driver_defaults_follow_the_simulated_clock(start_node, probe):
    text, expected = slash_fiction()
    node = start_node({'robot_description': text, 'publish_joint_states': True,
                       'use_sim_time': True, 'rate': 20},
                      ('-r', '__ns:=/simulated'), node_name='simulated')
    states, _ = record(probe, 'simulated')
    clock = probe.node.create_publisher(Clock, '/clock', 10)
    sim_ns = ns(5000)
    published = []
    while len(states) < 3:
        assert node.running(), node.output()[-2000:]
        assert len(published) < 2000, f'no joint_states after {len(published)} /clock messages'
        sim_ns += 10_000_000
        message = Clock()
        message.clock.sec, message.clock.nanosec = divmod(sim_ns, 1_000_000_000)
        clock.publish(message)
        published.append(sim_ns)
        probe.spin_for(0.01)
    for state in states:
        assert published[0] <= stamp_of(state) <= published[-1]

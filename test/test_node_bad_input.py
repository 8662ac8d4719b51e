"""Malformed JointStates: the node survives, publishes the usable part, says what it dropped.

The node throttles its warnings per kind, so each case gets a node of its own, all started
together: each in its own namespace (its own joint_states topic) and with its own frame prefix
(its frames on the shared /tf).
"""

import math
import time

from conftest import SAMPLE_URDF
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from node_fixtures import (
    all_finite,
    assert_pose,
    by_child,
    children,
    GRIPPER_CHILDREN,
    joint_state,
    Link,
    NodeProcess,
    ns,
    RELIABLE,
    SAMPLE_CHILD,
    sample_pose,
    stamp_of,
    stop_all,
    transforms_at,
    wait_for_log,
)
import pytest
from rclpy.serialization import serialize_message
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.qos import TF_QOS

PAN, TORSO, ELBOW = 'shoulder_pan_joint', 'torso_lift_joint', 'elbow_joint'
VALID = {TORSO: 0.1, PAN: 0.2, ELBOW: 0.3, 'left_finger_joint': 0.01}

# case: (names, positions, the joints published from it with their values, log fragments)
CASES = {
    'names_longer': ([TORSO, PAN, ELBOW], [0.15, 0.25], {TORSO: 0.15, PAN: 0.25},
                     ['3 names but 2 positions']),
    'positions_longer': ([TORSO, PAN], [0.15, 0.25, 0.35], {TORSO: 0.15, PAN: 0.25},
                         ['2 names but 3 positions']),
    'empty_positions': ([TORSO, ELBOW], [], {}, ['2 names but 0 positions']),
    'nan': ([TORSO, 'left_finger_joint', PAN], [math.nan, math.nan, 0.25], {PAN: 0.25},
            ['NaN or infinite', TORSO, 'left_finger_joint']),
    'inf': ([ELBOW, 'wrist_roll_joint', PAN], [math.inf, -math.inf, 0.25], {PAN: 0.25},
            ['NaN or infinite', ELBOW, 'wrist_roll_joint']),
    'duplicates': ([ELBOW, PAN, ELBOW], [0.1, 0.25, 0.3], {PAN: 0.25},
                   ['more than once', ELBOW]),
    'unknown': (['ghost_joint', PAN], [1.0, 0.25], {PAN: 0.25}, ['does not have', 'ghost_joint']),
    'fixed_joint': (['base_joint', PAN], [0.5, 0.25], {PAN: 0.25}, ['base_joint']),
    'empty_message': ([], [], {}, []),
}
DIAG = 'diag'


def node_name(case: str) -> str:
    return f'bad_{case}'


@pytest.fixture(scope='module')
def links(tmp_path_factory, module_probe):
    """A started node and its Link per case (and one for diagnostics), keyed by case."""
    directory = tmp_path_factory.mktemp('bad_input')
    processes = {}
    for case in [*CASES, DIAG]:
        name = node_name(case)
        parameters = {'robot_description': SAMPLE_URDF.read_text(), 'frame_prefix': f'{case}/'}
        if case == DIAG:
            # The diagnostics test counts every state it sends: a queue of 5 loses one when the
            # node stalls for 100 ms on a loaded machine (seen once in CI, a 300 ms stall).
            parameters['qos_overrides'] = {f'/{name}/joint_states': {'subscription': {
                'depth': 100}}}
        processes[case] = NodeProcess(directory, parameters, ('-r', f'__ns:=/{name}'),
                                      node_name=name)
        # One at a time: Fast DDS's shared-memory transport can hang a participant created
        # while many others start on a loaded machine (ros2/rmw_fastrtps#860); seen here once
        # in about eight suite runs, as a node that never logged anything.
        wait_for_log(processes[case], module_probe, "robot 'sample_arm'", timeout=30.0)
    tf = module_probe.record(TFMessage, '/tf', TF_QOS)
    diagnostics = module_probe.record(DiagnosticArray, '/diagnostics', RELIABLE)
    yield {case: Link(module_probe, process, name=node_name(case), namespace=f'/{node_name(case)}',
                      prefix=f'{case}/', tf=tf, diagnostics=diagnostics)
           for case, process in processes.items()}
    stop_all(processes.values())


def expected_children(link, joints):
    followers = GRIPPER_CHILDREN if 'left_finger_joint' in joints else set()
    return {link.prefix + c for c in {SAMPLE_CHILD[j] for j in joints} | followers}


def assert_values(link, message, values):
    frames = by_child([message])
    for joint, value in values.items():
        assert_pose(frames[link.prefix + SAMPLE_CHILD[joint]], sample_pose(joint, value))


@pytest.mark.parametrize('case', CASES)
def test_bad_joint_state_is_survived_and_its_usable_part_published(links, case):
    link = links[case]
    publisher = link.joint_states()
    link.begin()
    names, positions, published, fragments = CASES[case]

    publisher.publish(joint_state(ns(100), names, positions))
    if published:
        [message] = link.expect(ns(100))
        assert children(message) == expected_children(link, published)
        assert_values(link, message, published)
    after = link.publish_and_expect(publisher, joint_state(ns(101), VALID))

    # The valid state after it is published whole and right.
    assert children(after) == expected_children(link, VALID)
    assert_values(link, after, VALID)
    # Nothing else came from the bad state (it was processed before the valid one).
    assert len(transforms_at(link.tf, ns(100), link.prefix)) == (1 if published else 0)
    assert all_finite(link.tf)
    assert link.process.process.poll() is None
    if fragments:
        log = wait_for_log(link.process, link.probe, fragments[0])
        assert any(all(f in line for f in fragments) for line in log.splitlines()), log
    log = link.process.output()
    assert 'Traceback' not in log and 'failed to process' not in log


def test_length_mismatch_warning_names_the_joints_left_without_a_position(links):
    link = links['names_longer']
    publisher = link.joint_states()
    link.begin()

    link.publish_and_expect(publisher, joint_state(ns(200), [TORSO, PAN, ELBOW], [0.1, 0.2]))

    log = wait_for_log(link.process, link.probe, 'names but')
    line = next(x for x in log.splitlines() if 'names but' in x)
    assert ELBOW in line


def test_unknown_names_are_reported_once(links):
    link = links['unknown']
    publisher = link.joint_states()
    link.begin()

    for sec in (300, 301):
        link.publish_and_expect(publisher, joint_state(ns(sec), ['ghost_joint', PAN], [1, 0.1]))

    log = wait_for_log(link.process, link.probe, 'ghost_joint')
    assert sum('ghost_joint' in line for line in log.splitlines()) == 1


def test_diagnostics_count_received_states_unknown_names_and_drop_reasons(links):
    link = links[DIAG]
    publisher = link.joint_states()
    link.begin()
    now = time.time()  # a status stamped later counts every warm-up state
    start = int(link.wait_for_diagnostics(lambda v: v['_stamp'] > now)['joint_states received'])
    states = [
        joint_state(ns(100), [PAN], [0.1]),
        joint_state(ns(101), [PAN, TORSO], [0.1, 0.1]),
        joint_state(ns(102), ['ghost_a', PAN], [1.0, 0.1]),
        joint_state(ns(103), [TORSO, PAN], [math.nan, 0.1]),
        joint_state(ns(104), [ELBOW, ELBOW], [0.1, 0.2]),
        joint_state(ns(105), [PAN, ELBOW], [0.1]),
        joint_state(ns(105, 10_000_000), [PAN], [0.2]),  # 10 ms after the last: rate limit
        joint_state(ns(106), [ELBOW], [3.0]),  # clamped to 2.3
        # Bytes cut short: a sender with a broken serializer (the node reads the raw bytes).
        serialize_message(joint_state(ns(107), [PAN, ELBOW], [0.1, 0.2]))[:30],
    ]

    for state in states:
        publisher.publish(state)
        link.probe.spin_for(0.02)  # the node keeps 5 states: do not outrun it
    values = link.wait_for_diagnostics(
        lambda v: int(v['joint_states received']) >= start + len(states), timeout=5)

    assert values['robot'] == 'sample_arm'
    assert values['unknown joint names'] == 'ghost_a'
    assert values['joints clamped'] == ELBOW
    assert values['dropped: NaN or infinite position'] == '1'
    assert values['dropped: duplicated joint names'] == '1'
    assert values['dropped: names and positions differ in length'] == '1'
    assert values['dropped: rate limit (publish_frequency)'] == '1'
    assert values['dropped: malformed JointState bytes'] == '1'
    assert 'dropped: internal error' not in values
    assert values['_level'] == DiagnosticStatus.WARN  # some input was unusable
    assert int(values['joint_states received']) == start + len(states)
    log = wait_for_log(link.process, link.probe, 'ignoring a JointState')
    assert 'a string of 19 bytes does not fit' in log  # 'shoulder_pan_joint'


def test_diagnostics_report_the_joint_states_rate(links):
    link = links[DIAG]
    publisher = link.joint_states()
    link.begin()
    rates = []

    deadline, k = time.monotonic() + 4.0, 0
    while time.monotonic() < deadline and not any(r >= 12 for r in rates):
        k += 1
        publisher.publish(joint_state(ns(400) + k * 50_000_000, [PAN], [0.001 * k]))
        link.probe.spin_for(0.05)  # about 20 Hz
        rates = [float({kv.key: kv.value for kv in s.values}['joint_states rate (Hz)'])
                 for s in link.diagnostic_statuses()]
    stopped = link.wait_for_diagnostics(lambda v: v['joint_states rate (Hz)'] == '0.0',
                                        timeout=3, what='the rate to fall to 0 after the stop')

    # The node counts over a nominal 1 s period; allow for its timer's jitter.
    assert any(12 <= r <= 30 for r in rates), rates
    assert max(rates) <= 30, rates
    assert stopped['joint_states age (s)'] != ''
    assert all(stamp_of(t) >= ns(400) for m in link.tf for t in m.transforms
               if t.child_frame_id.startswith(link.prefix))

"""Reliability and security of description loading: fuzzing, XML attacks, huge inputs.

Every input must end as a RobotModel or as a DescriptionError with a message, within a CPU-time
limit that only a hang exceeds; a model that builds must give finite transforms with unit
quaternions. No test here bounds wall-clock time (that is the benchmark's business): where cost
matters, tests compare CPU times of the same process as a ratio. Tests marked `slow` run with
--run-slow only (test/pytest_slow.py).
"""

from __future__ import annotations

from collections.abc import Iterator
import contextlib
import copy
import http.server
import json
import math
import os
from pathlib import Path
import random
import signal
import subprocess
import sys
import threading
import time

from call_count import python_steps
from conftest import SAMPLE_URDF
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import jvrc_description
from lxml import etree
import numpy as np
import pytest
from reference_math import (
    homogeneous,
    matrix_quaternion,
    pose_matrix,
    quaternion_matrix,
    rodrigues,
    rpy_matrix,
)

from urdf_state_publisher import DescriptionError, RobotModel
from urdf_state_publisher.description import JointType

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# --------------------------------------------------------------------------- budgets

# The CPU time after which a case (parse, build, a few updates) is interrupted as a hang.
CASE_CPU_LIMIT_S = 5.0
# "Physical" magnitude: models whose numbers stay below this cannot overflow a double in any
# update (see `overflow_free`); joint values fed to updates stay below HUGE_VALUE.
TAME = 1e6
HUGE_VALUE = 1e300
SLOW_FACTOR = 20


def fuzz_settings(examples: int, **extra) -> settings:
    """Seeded, bounded hypothesis settings: the same cases on every run, no database."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), **extra)


# --------------------------------------------------------------------------- sources

def jvrc1_path() -> Path:
    return Path(jvrc_description.__file__).parent / 'urdf' / 'jvrc1.urdf'


def _load_tree(path: Path) -> etree._Element:
    parser = etree.XMLParser(remove_comments=True, remove_blank_text=True)
    return etree.parse(str(path), parser).getroot()


def _frames(root: etree._Element) -> set[str]:
    """The frames a model of `root` has, as the XML says: its links and its sensors."""
    return {e.get('name') for e in root.iter('link', 'sensor')}


SAMPLE_TREE = _load_tree(SAMPLE_URDF)
JVRC1_TREE = _load_tree(jvrc1_path())
SEED_TREES = [SAMPLE_TREE, JVRC1_TREE]
SINGLE_VALUE = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC)


# --------------------------------------------------------------------------- the oracle

class CaseTimeout(BaseException):  # noqa: N818 - BaseException so no `except Exception` eats it
    """A fuzz case used more CPU time than any input may take."""


@contextlib.contextmanager
def cpu_time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` of CPU time (SIGVTALRM: pytest-timeout is untouched)."""
    def on_alarm(signum, frame):
        raise CaseTimeout(f'case still running after {seconds} s of CPU time')

    previous = signal.signal(signal.SIGVTALRM, on_alarm)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def test_cpu_time_limit_interrupts_a_busy_case() -> None:
    """The hang detector itself: a busy loop is stopped, even inside `except Exception`.

    Counted in CPU time, as the limit is: a loaded machine stretches the wall-clock time only.
    The kernel charges CPU time to the timer in ticks: it may fire a few ms early.
    """
    start = time.process_time()
    with pytest.raises(CaseTimeout):
        with cpu_time_limit(0.2):
            while True:
                try:
                    sum(range(1000))
                except Exception:  # noqa: BLE001 - what a sloppy parser might do
                    pass
    used = time.process_time() - start
    assert 0.1 <= used < 2.0, f'interrupted after {used:.2f} s of CPU time'


def load(document: str | bytes) -> RobotModel | DescriptionError:
    """The model of `document` or its DescriptionError; any other exception fails the test."""
    try:
        return RobotModel.from_urdf(document)
    except DescriptionError as error:
        message = str(error)
        assert message.strip(), 'a DescriptionError without a message'
        return error


def assert_finite_unit(rows: np.ndarray, what: str) -> None:
    """Rows of (x, y, z, qx, qy, qz, qw): finite, quaternions of unit length."""
    rows = np.asarray(rows, dtype=float).reshape(-1, 7)
    assert np.isfinite(rows).all(), f'{what}: non-finite transform {rows[~np.isfinite(rows)]}'
    norms = np.linalg.norm(rows[:, 3:], axis=1)
    assert np.all(np.abs(norms - 1.0) < 1e-9), f'{what}: quaternion norms {norms}'


def overflow_free(model: RobotModel) -> bool:
    """Whether no update can overflow: translations, prismatic limits, mimic gains < TAME.

    With |value| <= HUGE_VALUE, a follower's value m*v + o stays below 1e306; revolute and
    continuous values only go through sin and cos; prismatic values are clamped to limits.
    Axes must be unit: an axis near the largest double loses its direction (a known bug).
    """
    for joint in model.description.joints:
        if joint.type not in (JointType.FIXED, JointType.FLOATING) and abs(
                math.hypot(*joint.axis) - 1.0) > 1e-9:
            return False
        if any(abs(c) > TAME for c in joint.origin.xyz):
            return False
        if joint.type is JointType.PRISMATIC and joint.limits is not None and max(
                abs(joint.limits.lower), abs(joint.limits.upper)) > TAME:
            return False
        source = model.mimic_source(joint.name)
        if source is not None and (abs(source[1]) > TAME or abs(source[2]) > TAME):
            return False
    # A sensor origin near the largest double overflows when rotated into the root frame.
    return all(abs(c) <= TAME for sensor in model.sensors for c in sensor.origin.xyz)


SPECIAL_VALUES = [math.nan, math.inf, -math.inf, HUGE_VALUE, -HUGE_VALUE, 0.0, -0.0, 5e-324,
                  1e6, -1e6, math.pi, 2 * math.pi]
EXTREME_VALUES = [sys.float_info.max, -sys.float_info.max, 1e308, -1e308]
joint_values = st.one_of(st.floats(-10, 10), st.sampled_from(SPECIAL_VALUES),
                         st.floats(-HUGE_VALUE, HUGE_VALUE))
extreme_joint_values = st.one_of(joint_values, st.sampled_from(EXTREME_VALUES))


def random_value(rng: random.Random, extreme: bool = False) -> float:
    """A joint value: mostly plausible, often special, sometimes huge."""
    roll = rng.random()
    if roll < 0.5:
        return rng.uniform(-4, 4)
    if roll < 0.8:
        return rng.choice(SPECIAL_VALUES + EXTREME_VALUES if extreme else SPECIAL_VALUES)
    return rng.choice((-1, 1)) * 10 ** rng.uniform(-300, 300)


def check_model(model: RobotModel, data: st.DataObject, *, extreme: bool = False,
                require_finite: bool | None = None) -> bool:
    """Drive a built model with random joint states; return whether it was overflow-free.

    Transforms must be finite with unit quaternions whenever the model is overflow-free
    (`require_finite=None`) or always (`require_finite=True`). An update of every joint at once
    must hold every joint or report it; in an overflow-free model, exactly the joints it should.
    """
    tame = overflow_free(model)
    strict = tame if require_finite is None else require_finite
    assert_finite_unit([(*s.pose.translation, *s.pose.rotation)
                        for s in model.static_transforms()], 'static transforms')
    joints = [j.name for j in model.description.joints]
    name = st.sampled_from(joints + ['', 'nope', 'j1', '\xff'])
    values = extreme_joint_values if extreme else joint_values
    with np.errstate(all='ignore'):
        for _ in range(data.draw(st.integers(1, 3), label='updates')):
            names = data.draw(st.lists(name, max_size=12), label='names')
            positions = data.draw(st.lists(values, min_size=max(0, len(names) - 2),
                                           max_size=len(names) + 2), label='positions')
            update = model.update(names, positions)
            assert update.transforms.shape == (len(update.plan.joints), 7)
            if strict:
                assert_finite_unit(update.transforms, f'update {names} {positions}')
        # every joint at once: many values, drawn from a seeded generator
        rng = random.Random(data.draw(st.integers(0, 2**32), label='value seed'))
        scalar = [j.name for j in model.description.joints if j.type in SINGLE_VALUE]
        everything = [random_value(rng, extreme) for _ in scalar]
        update = model.update(scalar, everything)
    # Each joint is named once: it is computed or dropped (reported), never silently lost.
    assert len(set(update.plan.joints)) == len(update.plan.joints)
    assert set(update.plan.joints) | set(update.non_finite) == set(scalar)
    if tame and not extreme:  # nothing overflows: exactly the NaN and infinite values go
        sent = dict(zip(scalar, everything))
        assert update.non_finite == tuple(n for n, v in sent.items() if not math.isfinite(v))
        # what is left: the finite values, and followers of one of them (theirs dropped)
        leader = {j.name: j.mimic.joint for j in model.description.joints
                  if j.mimic and j.mimic.joint in sent}
        moved = set()
        for name in scalar:
            source = name  # the loader refuses mimic cycles: the walk ends
            while not math.isfinite(sent[source]) and source in leader:
                source = leader[source]
            if math.isfinite(sent[source]):
                moved.add(name)
        assert set(update.plan.joints) == moved
    if strict:
        assert_finite_unit(update.transforms, 'update of every joint')
    if tame:  # composing origins of 1e308 overflows whatever the model does
        poses = model.frame_poses()
        assert set(poses) == set(model.links) | {s.name for s in model.sensors}
        assert_finite_unit([(*p.translation, *p.rotation) for p in poses.values()],
                           'frame poses at default positions')
    return tame


# Outcomes per fuzz source, printed at the end of the module (run with -s to see them).
TALLY: dict[str, dict[str, int]] = {}


def count(source: str, outcome: str) -> None:
    outcomes = TALLY.setdefault(source, {})
    outcomes[outcome] = outcomes.get(outcome, 0) + 1


def check_document(document: str | bytes, data: st.DataObject, source: str,
                   **options) -> None:
    """The fuzz oracle: DescriptionError or a sound model, within CASE_CPU_LIMIT_S."""
    with cpu_time_limit(CASE_CPU_LIMIT_S):
        result = load(document)
        if isinstance(result, DescriptionError):
            count(source, 'refused')
        else:
            tame = check_model(result, data, **options)
            count(source, 'model' if tame else 'model (not overflow-free)')


@pytest.fixture(scope='module', autouse=True)
def _report_tally() -> Iterator[None]:
    yield
    if TALLY:
        print('\nfuzz outcomes:')
        for source, outcomes in sorted(TALLY.items()):
            print(f'  {source}: {json.dumps(outcomes, sort_keys=True)}')


# --------------------------------------------------------------------------- strategies

NUMBER_WORDS = [
    'nan', 'NaN', '-nan', 'inf', '-inf', 'Infinity', '1e309', '-1e309', '1e300', '-1e300',
    '1.7976931348623157e308', '-1.7976931348623157e308', '5e-324', '-0', '0', '-1', '1e6',
    '0x10', '1_0', '\u0661', '', ' ', 'abc', '1,5', '++1', '.', 'e5', '1e', '0.5 ']
xml_text = st.text(st.characters(blacklist_categories=('Cs', 'Cc', 'Cn')), max_size=24)
number_text = st.one_of(
    st.sampled_from(NUMBER_WORDS),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(-10, 10).map(lambda x: f'{x:.6g}'),
    st.integers(-10**30, 10**30).map(str))
vector_text = st.one_of(
    st.lists(number_text, min_size=3, max_size=3).map(' '.join),
    st.lists(number_text, max_size=5).map(' '.join),
    st.sampled_from(['1 2 3', '1,2,3', '\t1\n2  3 ', '0 0 0', 'nan 0 0', '1e308 1e308 0']))
TAGS = ['robot', 'link', 'joint', 'parent', 'child', 'origin', 'axis', 'limit', 'mimic',
        'safety_controller', 'sensor', 'model_state', 'joint_state', 'visual', 'collision',
        'inertial', 'geometry', 'box', 'material', 'transmission', 'gazebo', 'x']
ATTRIBUTES = ['name', 'type', 'link', 'joint', 'xyz', 'rpy', 'lower', 'upper', 'effort',
              'velocity', 'multiplier', 'offset', 'soft_lower_limit', 'soft_upper_limit',
              'k_position', 'k_velocity', 'update_rate', 'position', 'quat_xyzw', 'version']
JOINT_TYPES = [t.value for t in JointType] + ['', 'Revolute', 'ball', 'fixed ']


def _names(root: etree._Element, tag: str) -> list[str]:
    return [e.get('name') for e in root.iter(tag) if e.get('name')] or ['none']


def attribute_value(data: st.DataObject, root: etree._Element, attribute: str) -> str:
    if attribute in ('xyz', 'rpy', 'quat_xyzw'):
        return data.draw(vector_text, label=attribute)
    if attribute == 'type':
        return data.draw(st.one_of(st.sampled_from(JOINT_TYPES), xml_text), label=attribute)
    if attribute in ('name', 'link', 'joint'):
        return data.draw(st.one_of(st.sampled_from(_names(root, 'link') + _names(root, 'joint')),
                                   xml_text, st.just('n' * 500)), label=attribute)
    return data.draw(number_text, label=attribute)


def _elements(root: etree._Element) -> list[etree._Element]:
    return [e for e in root.iter() if isinstance(e.tag, str)]


def _pick(data: st.DataObject, items: list, label: str):
    return items[data.draw(st.integers(0, len(items) - 1), label=label)]


def mutate(root: etree._Element, data: st.DataObject) -> None:
    """Apply one random structural mutation to the tree in place."""
    operation = data.draw(st.sampled_from([
        'drop', 'duplicate', 'rename_tag', 'drop_attribute', 'set_attribute', 'rename_attribute',
        'relink', 'mimic', 'mimic_cycle', 'joint_type', 'move', 'text', 'swap_limits']),
        label='operation')
    elements = _elements(root)
    joints = list(root.iter('joint'))
    element = _pick(data, elements, 'element')
    parent = element.getparent()
    if operation == 'drop' and parent is not None:
        parent.remove(element)
    elif operation == 'duplicate' and parent is not None:
        parent.insert(parent.index(element) + 1, copy.deepcopy(element))
    elif operation == 'rename_tag':
        element.tag = data.draw(st.sampled_from(TAGS), label='tag')
    elif operation == 'drop_attribute' and element.attrib:
        del element.attrib[data.draw(st.sampled_from(sorted(element.attrib)), label='attr')]
    elif operation == 'set_attribute':
        attribute = data.draw(st.sampled_from(ATTRIBUTES + sorted(element.attrib)), label='attr')
        element.set(attribute, attribute_value(data, root, attribute))
    elif operation == 'rename_attribute' and element.attrib:
        old = data.draw(st.sampled_from(sorted(element.attrib)), label='attr')
        value = element.attrib.pop(old)
        element.set(data.draw(st.sampled_from(ATTRIBUTES), label='new attr'), value)
    elif operation == 'relink' and joints:
        joint = _pick(data, joints, 'joint')
        role = data.draw(st.sampled_from(['parent', 'child']), label='role')
        target = joint.find(role)
        if target is None:
            target = etree.SubElement(joint, role)
        target.set('link', data.draw(st.one_of(st.sampled_from(_names(root, 'link')), xml_text),
                                     label='link'))
    elif operation == 'mimic' and joints:
        joint = _pick(data, joints, 'joint')
        for old in joint.findall('mimic'):
            joint.remove(old)
        mimic = etree.SubElement(joint, 'mimic', joint=data.draw(
            st.one_of(st.sampled_from(_names(root, 'joint')), xml_text), label='leader'))
        for attribute in ('multiplier', 'offset'):
            if data.draw(st.booleans(), label=f'has {attribute}'):
                mimic.set(attribute, data.draw(number_text, label=attribute))
    elif operation == 'mimic_cycle' and len(joints) >= 2:
        ring = data.draw(st.lists(st.sampled_from(joints), min_size=2, max_size=6,
                                  unique_by=id), label='ring')
        for k, joint in enumerate(ring):
            for old in joint.findall('mimic'):
                joint.remove(old)
            etree.SubElement(joint, 'mimic', joint=ring[(k + 1) % len(ring)].get('name', ''))
    elif operation == 'joint_type' and joints:
        _pick(data, joints, 'joint').set('type', data.draw(st.sampled_from(JOINT_TYPES)))
    elif operation == 'move' and parent is not None:
        destination = _pick(data, elements, 'destination')
        if destination is not element and element not in destination.iterancestors():
            destination.append(element)
    elif operation == 'text':
        element.text = data.draw(st.one_of(number_text, xml_text), label='text')
    elif operation == 'swap_limits':
        for limit in root.iter('limit'):
            lower, upper = limit.get('lower'), limit.get('upper')
            if lower is not None and upper is not None:
                limit.set('lower', upper)
                limit.set('upper', lower)
                break


ENCODINGS = ['str', 'utf-8', 'utf-16', 'utf-32', 'iso-8859-1']


def serialize(root: etree._Element, data: st.DataObject) -> str | bytes:
    encoding = data.draw(st.sampled_from(ENCODINGS), label='encoding')
    if encoding == 'str':
        return etree.tostring(root, encoding='unicode')
    try:
        return etree.tostring(root, encoding=encoding, xml_declaration=True)
    except (ValueError, UnicodeEncodeError):
        return etree.tostring(root, encoding='unicode')


def mutated_document(source: etree._Element, data: st.DataObject) -> str | bytes:
    root = copy.deepcopy(source)
    for _ in range(data.draw(st.integers(1, 6), label='mutations')):
        try:
            mutate(root, data)
        except ValueError:
            pass  # lxml refuses text that XML cannot hold: that mutation is skipped
    return serialize(root, data)


# Generated robots -------------------------------------------------------------------------

TAME_WORDS = ['0', '1', '-1', '0.5', '1e-3']
EXTREME_WORDS = ['1e200', '-1e200', '1e300', '1e308', '-1e308', '1.7976931348623157e308']


def random_number(rng: random.Random, mode: str, nasty_rate: float = 0.15) -> str:
    """Text of a number: 'tame' (|x| <= 3); 'nasty': tame, else (at `nasty_rate`) any of
    NUMBER_WORDS; 'extreme': tame, else (30 %) near the largest double."""
    roll = rng.random()
    if mode == 'nasty' and roll < nasty_rate:
        return rng.choice(NUMBER_WORDS)
    if mode == 'extreme' and roll < 0.3:
        return rng.choice(EXTREME_WORDS)
    if roll < 0.8:
        return f'{rng.uniform(-3, 3):.4g}'
    return rng.choice(TAME_WORDS)


JOINT_KINDS = ['revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar']
# At most one kind of fault per generated robot, so that half of them build.
FAULTS = [None] * 5 + ['numbers', 'duplicate link', 'missing parent', 'any parent', 'bad type',
                       'mimic anyone']


def generated_robot(data: st.DataObject, *, numbers: str = 'nasty', deep: bool = False) -> str:
    """A random robot: a tree or a deep chain, every joint type, mimic chains and cycles.

    Each robot has at most one kind of fault (bad numbers, a duplicate link, a missing or
    arbitrary parent link, a bad joint type, mimics of arbitrary joints), so that about half
    of them build and their models get exercised. A few shape decisions are hypothesis draws;
    the bulk comes from a generator seeded by a draw.
    """
    rng = random.Random(data.draw(st.integers(0, 2**32), label='robot seed'))
    n = data.draw(st.integers(50, 400) if deep else st.integers(1, 30), label='links')
    chain = deep or data.draw(st.booleans(), label='chain')
    mimic_everything = deep and data.draw(st.booleans(), label='deep mimic chain')
    shuffle = data.draw(st.booleans(), label='shuffle')
    fault = data.draw(st.sampled_from(FAULTS), label='fault')
    rate = 3.0 / (12 * n) if fault == 'numbers' else 0.0  # about 3 bad numbers per robot

    def number(mode: str = numbers) -> str:
        return random_number(rng, mode, rate)

    def vector(mode: str = numbers) -> str:
        return ' '.join(number(mode) for _ in range(3))

    def chance(probability: float, kind: str) -> bool:
        return fault == kind and rng.random() < probability

    links = [f'l{i}' for i in range(n)]
    parts = [f'<link name="{name}"/>' for name in links]
    scalar: list[int] = []  # the single-value joints so far: the ones a mimic can follow
    if fault == 'duplicate link':
        parts.append(f'<link name="{rng.choice(links)}"/>')
    for i in range(1, n):
        parent = links[i - 1] if chain else links[rng.randrange(i)]
        if chance(2 / n, 'missing parent'):
            parent = 'ghost'
        if chance(2 / n, 'any parent'):
            parent = rng.choice(links)
        kind = 'continuous' if mimic_everything else rng.choice(JOINT_KINDS)
        if chance(2 / n, 'bad type'):
            kind = rng.choice(JOINT_TYPES)
        body = [f'<parent link="{parent}"/><child link="{links[i]}"/>']
        if rng.random() < 0.8:
            # extreme translations plus extreme travel overflow: a known bug, pinned by
            # test_overflow_prismatic_translation_is_finite; extreme rotations are fine
            body.append(f'<origin xyz="{vector("nasty")}" rpy="{vector()}"/>')
        if rng.random() < 0.8:
            # extreme axes are test_axis_near_the_largest_double_stays_unit's business
            body.append(f'<axis xyz="{vector("nasty")}"/>')
        if kind in ('revolute', 'prismatic') or rng.random() < 0.1:
            low, high = number(), number()
            if _is_float(low) and _is_float(high) and float(low) > float(high):
                low, high = high, low
            body.append(f'<limit lower="{low}" upper="{high}" effort="{number()}" '
                        f'velocity="{number()}"/>')
        if rng.random() < 0.1:
            body.append(f'<safety_controller soft_lower_limit="{number()}" '
                        f'soft_upper_limit="{number()}" k_velocity="1"/>')
        if mimic_everything and i > 1:
            body.append(f'<mimic joint="j{i - 1}" multiplier="{number()}"/>')
        elif fault == 'mimic anyone' and rng.random() < 0.3:
            body.append(f'<mimic joint="j{rng.randint(1, n - 1)}"/>')  # cycles, self, fixed
        elif scalar and kind in ('revolute', 'continuous', 'prismatic') and rng.random() < 0.3:
            leader = rng.choice(scalar)  # an earlier joint: chains of any depth
            attributes = ''.join(f' {a}="{number()}"'
                                 for a in ('multiplier', 'offset') if rng.random() < 0.7)
            body.append(f'<mimic joint="j{leader}"{attributes}/>')
        parts.append(f'<joint name="j{i}" type="{kind}">{"".join(body)}</joint>')
        if kind in ('revolute', 'continuous', 'prismatic'):
            scalar.append(i)
    for k in range(rng.randint(0, 2)):
        parts.append(f'<sensor name="s{k}" type="camera"><parent link="{rng.choice(links)}"/>'
                     f'<origin xyz="{vector()}"/></sensor>')
    if rng.random() < 0.2:
        parts.append(f'<model_state><joint_state joint="j{rng.randint(1, n)}" '
                     f'position="{number()}"/></model_state>')
    if shuffle:
        rng.shuffle(parts)
    return f'<robot name="generated">{"".join(parts)}</robot>'


def _is_float(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# --------------------------------------------------------------------------- 1. fuzzing

SAMPLE_EXAMPLES = 200
JVRC1_EXAMPLES = 80
GENERATED_EXAMPLES = 200
DEEP_EXAMPLES = 20
SPLICE_EXAMPLES = 150


@fuzz_settings(SAMPLE_EXAMPLES)
@given(st.data())
def test_fuzz_mutated_sample_arm(data: st.DataObject) -> None:
    check_document(mutated_document(SAMPLE_TREE, data), data, 'sample_arm')


@pytest.mark.slow
@fuzz_settings(SAMPLE_EXAMPLES * SLOW_FACTOR)
@given(st.data())
def test_fuzz_mutated_sample_arm_long(data: st.DataObject) -> None:
    check_document(mutated_document(SAMPLE_TREE, data), data, 'sample_arm')


@fuzz_settings(JVRC1_EXAMPLES)
@given(st.data())
def test_fuzz_mutated_jvrc1(data: st.DataObject) -> None:
    check_document(mutated_document(JVRC1_TREE, data), data, 'jvrc1')


@pytest.mark.slow
@fuzz_settings(JVRC1_EXAMPLES * SLOW_FACTOR)
@given(st.data())
def test_fuzz_mutated_jvrc1_long(data: st.DataObject) -> None:
    check_document(mutated_document(JVRC1_TREE, data), data, 'jvrc1')


@fuzz_settings(GENERATED_EXAMPLES)
@given(st.data())
def test_fuzz_generated_robots(data: st.DataObject) -> None:
    check_document(generated_robot(data), data, 'generated')


@pytest.mark.slow
@fuzz_settings(GENERATED_EXAMPLES * SLOW_FACTOR)
@given(st.data())
def test_fuzz_generated_robots_long(data: st.DataObject) -> None:
    check_document(generated_robot(data), data, 'generated')


@fuzz_settings(DEEP_EXAMPLES)
@given(st.data())
def test_fuzz_deep_chains(data: st.DataObject) -> None:
    check_document(generated_robot(data, deep=True), data, 'deep chains')


@pytest.mark.slow
@fuzz_settings(DEEP_EXAMPLES * SLOW_FACTOR)
@given(st.data())
def test_fuzz_deep_chains_long(data: st.DataObject) -> None:
    check_document(generated_robot(data, deep=True), data, 'deep chains')


# URDF 1.1 documents -----------------------------------------------------------------------

def _as_urdf_1_1(source: etree._Element) -> etree._Element:
    """`source` as a 1.1 document: every rpy origin rewritten as a quaternion of length 2."""
    root = copy.deepcopy(source)
    root.set('version', '1.1')
    for origin in root.iter('origin'):
        rpy = [float(a) for a in origin.attrib.pop('rpy', '0 0 0').split()]
        origin.set('quat_xyzw', ' '.join(repr(2 * c) for c in matrix_quaternion(
            rpy_matrix(*rpy))))
    return root


SAMPLE_1_1_TREE = _as_urdf_1_1(SAMPLE_TREE)
QUATERNION_WORDS = ['nan 0 0 1', '0 0 0 nan', 'inf 0 0 1', '1e309 0 0 1', '0 0 0 0',
                    '-0 -0 -0 -0', '1e308 1e308 1e308 1e308', '1.7976931348623157e308 0 0 '
                    '-1.7976931348623157e308', '5e-324 0 0 5e-324', '1e-300 0 0 0', '0 0 1',
                    '0 0 0 1 0', '', '0,0,0,1', '1e6 -1e6 1e6 -1e6']
quaternion_text = st.one_of(st.sampled_from(QUATERNION_WORDS),
                            st.lists(number_text, min_size=3, max_size=5).map(' '.join))


def mutate_quaternion(root: etree._Element, data: st.DataObject) -> None:
    """Write a nasty quat_xyzw on one origin (joint, sensor or link part), maybe beside rpy."""
    origins = list(root.iter('origin'))
    origin = _pick(data, origins, 'origin')
    origin.set('quat_xyzw', data.draw(quaternion_text, label='quat_xyzw'))
    if data.draw(st.booleans(), label='also rpy'):
        origin.set('rpy', data.draw(vector_text, label='rpy'))
    if data.draw(st.booleans(), label='version'):
        root.set('version', data.draw(st.sampled_from(['1.0', '1.1', '2.0', '1.x', '', '1.2']),
                                      label='version'))


def test_sample_arm_as_urdf_1_1_has_the_poses_of_the_sample() -> None:
    """The 1.1 seed is a faithful rewrite: its fuzz cases start from a working robot."""
    document = etree.tostring(SAMPLE_1_1_TREE, encoding='unicode')
    original, rewritten = (RobotModel.from_urdf(d) for d in (SAMPLE_URDF.read_text(), document))
    assert rewritten.description.version == '1.1'
    assert rewritten.warnings == ()
    poses = original.frame_poses()
    assert set(poses) == set(rewritten.frame_poses()) == _frames(SAMPLE_TREE)
    for frame, pose in rewritten.frame_poses().items():
        assert np.abs(pose_matrix(pose) - pose_matrix(poses[frame])).max() < 1e-12, frame


def unit_quaternion(text: str) -> tuple[float, ...] | None:
    """The rotation a quat_xyzw text stands for, or None if it is not four finite numbers, not
    all zero (the test's own reading: scaled by its largest part first, so nothing overflows)."""
    try:
        parts = [float(c) for c in text.split()]
    except ValueError:
        return None
    if len(parts) != 4 or not all(map(math.isfinite, parts)) or not any(parts):
        return None
    largest = max(map(abs, parts))
    parts = [c / largest for c in parts]
    norm = math.sqrt(sum(c * c for c in parts))
    return tuple(c / norm for c in parts)


@pytest.mark.parametrize('quaternion', QUATERNION_WORDS)
def test_nasty_quaternion_on_every_origin_is_refused_or_sound(quaternion: str) -> None:
    """Each nasty quaternion on each origin: a valid one is the origin's rotation; an invalid
    one refuses the robot with an error naming it, or, on a sensor, skips that sensor."""
    expected = unit_quaternion(quaternion)
    origins = list(SAMPLE_1_1_TREE.iter('origin'))
    assert {o.getparent().tag for o in origins} == {'joint', 'visual', 'sensor'}
    for index, origin in enumerate(origins):
        root = copy.deepcopy(SAMPLE_1_1_TREE)
        target = list(root.iter('origin'))[index]
        target.set('quat_xyzw', quaternion)
        result = load(etree.tostring(root, encoding='unicode'))
        owner = origin.getparent()
        name = owner.get('name') or owner.getparent().get('name')
        if expected is None and owner.tag != 'sensor':
            assert isinstance(result, DescriptionError), f'{quaternion!r} on {name} accepted'
            assert 'quat_xyzw' in str(result), str(result)
            assert repr(name) in str(result)
            continue
        assert isinstance(result, RobotModel), f'{quaternion!r} on {name}: {result}'
        if expected is None:
            assert set(result.frame_poses()) == _frames(SAMPLE_TREE) - {name}
            assert [w for w in result.warnings if repr(name) in w and 'quat_xyzw' in w
                    and w.endswith('sensor skipped')], result.warnings
        else:
            assert set(result.frame_poses()) == _frames(SAMPLE_TREE)
            assert result.warnings == ()
            kept = {j.name: j.origin for j in result.description.joints} | {
                s.name: s.origin for s in result.sensors}
            if owner.tag != 'visual':  # a link part's origin is checked, not kept
                assert np.abs(quaternion_matrix(kept[name].rotation)
                              - quaternion_matrix(expected)).max() < 1e-12, name
        assert_finite_unit([(*s.pose.translation, *s.pose.rotation)
                            for s in result.static_transforms()], quaternion)
        assert_finite_unit([(*p.translation, *p.rotation)
                            for p in result.frame_poses().values()], quaternion)


@fuzz_settings(SAMPLE_EXAMPLES)
@given(st.data())
def test_fuzz_mutated_urdf_1_1_sample_arm(data: st.DataObject) -> None:
    root = copy.deepcopy(SAMPLE_1_1_TREE)
    for _ in range(data.draw(st.integers(1, 3), label='quaternion mutations')):
        mutate_quaternion(root, data)
    for _ in range(data.draw(st.integers(0, 3), label='mutations')):
        try:
            mutate(root, data)
        except ValueError:
            pass  # lxml refuses text that XML cannot hold: that mutation is skipped
    check_document(serialize(root, data), data, 'sample_arm 1.1')


# URDF 1.2 documents -----------------------------------------------------------------------

LIMIT_1_2_ATTRIBUTES = ['lower', 'upper', 'effort', 'velocity', 'acceleration', 'deceleration',
                        'jerk']
SHAPES_1_2 = ['<sphere radius="{0}"/>', '<box size="{0} {0} {0}"/>',
              '<cylinder radius="0.1" length="{0}"/>', '<capsule radius="{0}" length="0.2"/>']


def mutate_1_2(root: etree._Element, data: st.DataObject) -> None:
    """Write a nasty number on one <limit> attribute (or drop one), or give a link a shape."""
    if data.draw(st.booleans(), label='limit or shape'):
        limit = _pick(data, list(root.iter('limit')), 'limit')
        attribute = data.draw(st.sampled_from(LIMIT_1_2_ATTRIBUTES), label='attribute')
        if data.draw(st.booleans(), label='drop'):
            limit.attrib.pop(attribute, None)
        else:
            limit.set(attribute, data.draw(number_text, label='value'))
        return
    link = _pick(data, list(root.iter('link')), 'link')
    part = etree.SubElement(link, data.draw(st.sampled_from(['visual', 'collision']),
                                            label='part'))
    shape = data.draw(st.sampled_from(SHAPES_1_2), label='shape')
    geometry = etree.SubElement(part, 'geometry')
    geometry.append(etree.fromstring(shape.format(data.draw(number_text, label='size'))))


@fuzz_settings(SAMPLE_EXAMPLES)
@given(st.data())
def test_fuzz_mutated_urdf_1_2_sample_arm(data: st.DataObject) -> None:
    """1.2's limits and shape checks: any nasty number is refused or makes a sound model."""
    root = copy.deepcopy(SAMPLE_TREE)
    root.set('version', '1.2')
    for _ in range(data.draw(st.integers(1, 4), label='1.2 mutations')):
        mutate_1_2(root, data)
    for _ in range(data.draw(st.integers(0, 2), label='mutations')):
        try:
            mutate(root, data)
        except ValueError:
            pass  # lxml refuses text that XML cannot hold: that mutation is skipped
    check_document(serialize(root, data), data, 'sample_arm 1.2')


SPLICES = ['', '<', '>', '/>', '"', "'", '=', '&', '&amp;', '&#0;', '&#x110000;', '&#65;',
           '<![CDATA[', ']]>', '<!--', '-->', '<?pi x?>', '<link name="l"/>', '</joint>',
           '<joint name="j" type="fixed">', '<mimic joint="j"/>', 'xmlns="urn:x"',
           'xmlns:a="urn:a" a:name="x"', '\ufeff', '\x00', '\x1b', '\ud800', 'é', '\u202e',
           'nan', '1e309', ' name="dup"']


@fuzz_settings(SPLICE_EXAMPLES)
@given(st.data())
def test_fuzz_spliced_text(data: st.DataObject) -> None:
    """Text-level corruption (what structure-aware mutation cannot produce), on both robots."""
    source = data.draw(st.sampled_from(SEED_TREES), label='source')
    text = etree.tostring(source, encoding='unicode')
    for _ in range(data.draw(st.integers(1, 5), label='splices')):
        start = data.draw(st.integers(0, len(text)), label='start')
        end = data.draw(st.integers(start, min(len(text), start + 40)), label='end')
        text = text[:start] + data.draw(st.sampled_from(SPLICES), label='insert') + text[end:]
    form = data.draw(st.sampled_from(['str', 'utf-8', 'utf-16']), label='form')
    document = text if form == 'str' else text.encode(form, 'surrogatepass')
    check_document(document, data, 'spliced text')


# Overflow: finite inputs whose products exceed the largest double ---------------------------

# A finite leader through an overflowing mimic once put NaN on /tf: model.update now drops
# whatever drives a non-finite row, until every row is finite.


EXTREME_EXAMPLES = 200
HOSTILE_EXAMPLES = 100


@fuzz_settings(EXTREME_EXAMPLES)
@given(st.data())
def test_fuzz_extreme_numbers_still_give_finite_transforms(data: st.DataObject) -> None:
    document = generated_robot(data, numbers='extreme')
    check_document(document, data, 'extreme numbers', extreme=True, require_finite=True)


def two_joint_robot(follower: str, leader: str = 'continuous', extra: str = '') -> str:
    return (
        '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
        f'<joint name="lead" type="{leader}"><parent link="a"/><child link="b"/>'
        '<axis xyz="0 0 1"/><limit lower="-1e308" upper="1e308" effort="1" velocity="1"/>'
        f'</joint><joint name="follow" type="continuous"><parent link="b"/><child link="c"/>'
        f'<axis xyz="0 0 1"/>{follower}</joint>{extra}</robot>')


# A joint beside the overflowing ones, sent in the same message: its exact pose must survive.
SIDE = ('<link name="side_link"/><joint name="side" type="continuous"><parent link="{parent}"/>'
        '<child link="side_link"/><origin xyz="0.1 0.2 0.3"/><axis xyz="0 1 0"/></joint>')
SIDE_VALUE = 0.7


def assert_only_side_is_left(update, dropped: tuple[str, ...]) -> None:
    """`dropped` were reported and left out; the side joint's row is its exact pose."""
    assert update.non_finite == dropped
    assert update.plan.joints == ('side',)
    assert update.values.tolist() == [SIDE_VALUE]
    row = update.transforms[0].tolist()
    expected = homogeneous((0.1, 0.2, 0.3), rodrigues((0.0, 1.0, 0.0), SIDE_VALUE))
    assert np.abs(homogeneous(row[:3], quaternion_matrix(row[3:])) - expected).max() < 1e-12


def test_overflow_mimic_product_gives_finite_transforms() -> None:
    model = RobotModel.from_urdf(two_joint_robot('<mimic joint="lead" multiplier="2"/>',
                                                 extra=SIDE.format(parent='a')))
    with np.errstate(all='ignore'):
        update = model.update(['lead', 'side'], [1e308, SIDE_VALUE])
    assert_only_side_is_left(update, ('lead',))
    # half as much does not overflow: leader and follower are both there
    update = model.update(['lead'], [5e307])
    assert update.plan.joints == ('lead', 'follow') and update.non_finite == ()
    assert update.values.tolist() == [5e307, 1e308]
    assert_finite_unit(update.transforms, 'leader 5e307, follower x2')


def mimic_gain_chain(multiplier: str) -> str:
    """j0 → j1 → j2, each follower `multiplier` times its leader, and the side joint."""
    links = ''.join(f'<link name="l{i}"/>' for i in range(4))
    joints = ''.join(
        f'<joint name="j{i}" type="continuous"><parent link="l{i}"/><child link="l{i + 1}"/>'
        f'<axis xyz="0 0 1"/>'
        + (f'<mimic joint="j{i - 1}" multiplier="{multiplier}"/>' if i else '')
        + '</joint>' for i in range(3))
    return f'<robot name="r">{links}{joints}{SIDE.format(parent="l0")}</robot>'


def test_overflow_composed_mimic_chain_is_refused_or_finite() -> None:
    result = load(mimic_gain_chain('1e200'))
    if isinstance(result, DescriptionError):  # refusing such a chain at load time is fine too
        assert 'mimic' in str(result) and 'multiplier' in str(result), str(result)
        return
    with np.errstate(all='ignore'):  # the composed gain 1e400 is infinite, even times 0
        update = result.update(['j0', 'side'], [0.0, SIDE_VALUE])
        assert update.plan.joints == ('j0', 'side', 'j1', 'j2')
        assert update.values.tolist() == [0.0, SIDE_VALUE, 0.0, 0.0]
        for value in (1.0, -3.0):  # j1 = 1e200·value is finite, j2 = 1e400·value is not
            update = result.update(['j0', 'side'], [value, SIDE_VALUE])
            assert_only_side_is_left(update, ('j0',))


def test_overflow_after_dropping_a_leader_is_finite() -> None:
    model = RobotModel.from_urdf(mimic_gain_chain('1e300'))
    with np.errstate(all='ignore'):
        update = model.update(['j0', 'j1', 'side'], [1.0, 1e10, SIDE_VALUE])
    # j1 = 1e10 drives j2 = 1e310, then j0 drives j2 = 1e600
    assert_only_side_is_left(update, ('j1', 'j0'))


def test_overflow_prismatic_translation_is_finite() -> None:
    model = RobotModel.from_urdf(
        '<robot name="r"><link name="a"/><link name="b"/><joint name="p" type="prismatic">'
        '<parent link="a"/><child link="b"/><origin xyz="1e308 0 0"/><axis xyz="1 0 0"/>'
        '<limit lower="0" upper="1e308" effort="1" velocity="1"/></joint>'
        f'{SIDE.format(parent="a")}</robot>')
    with np.errstate(all='ignore'):
        update = model.update(['p', 'side'], [1e308, SIDE_VALUE])
    assert_only_side_is_left(update, ('p',))  # 1e308 + 1e308
    update = model.update(['p'], [1e307])
    assert update.plan.joints == ('p',) and update.non_finite == ()
    assert update.transforms.tolist() == [[1e308 + 1e307, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]


def test_axis_near_the_largest_double_stays_unit() -> None:
    big = sys.float_info.max
    model = RobotModel.from_urdf(
        '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        f'<parent link="a"/><child link="b"/><axis xyz="{big!r} {big!r} 0"/></joint></robot>')
    axis = (math.sqrt(0.5), math.sqrt(0.5), 0.0)
    assert model.joint('j').axis == pytest.approx(axis)
    update = model.update(['j'], [1.0])
    assert update.plan.joints == ('j',)
    assert_finite_unit(update.transforms, 'rotation about that axis')
    row = update.transforms[0].tolist()
    assert row[:3] == [0.0, 0.0, 0.0]
    assert np.abs(quaternion_matrix(row[3:]) - rodrigues(axis, 1.0)).max() < 1e-12


def test_overflow_free_models_tolerate_huge_joint_values() -> None:
    """The bound the fuzz relies on: 1e300 joint values through x2 mimics stay finite."""
    model = RobotModel.from_file(jvrc1_path())
    assert overflow_free(model)
    scalar = [j.get('name') for j in JVRC1_TREE.iter('joint')
              if j.get('type') in ('revolute', 'continuous', 'prismatic')]
    values = np.full(len(scalar), HUGE_VALUE)
    values[::2] = -HUGE_VALUE
    update = model.update(scalar, values)
    assert update.non_finite == ()
    assert update.plan.joints == tuple(scalar)
    assert_finite_unit(update.transforms, 'jvrc1 at 1e300')


# --------------------------------------------------------------------------- 2. XML attacks

SECRET = 'S3CRET-7f1c2a-do-not-leak'


@pytest.fixture(scope='module')
def secret_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp('secret') / 'secret.txt'
    path.write_text(SECRET)
    return path


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self.hits.append(self.path)
        body = f'<!ENTITY leak "{SECRET}">'.encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope='module')
def http_server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that serves a DTD holding the secret and records every request."""
    server = http.server.HTTPServer(('127.0.0.1', 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f'http://127.0.0.1:{server.server_address[1]}', _Recorder.hits
    server.shutdown()
    server.server_close()


class FifoWatch:
    """A named pipe: a parser that opens it blocks, and a watcher thread notices and frees it."""

    def __init__(self, directory: Path):
        self.path = directory / 'pipe'
        if not self.path.exists():
            os.mkfifo(self.path)
        self.opened = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody is reading, as it should be
                continue
            self.opened = True
            os.write(fd, SECRET.encode())
            os.close(fd)

    def __enter__(self) -> FifoWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def laughs(levels: int = 9) -> str:
    lines = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{k} "{f"&lol{k - 1};" * 10}">' for k in range(1, levels + 1)]
    return f'<!DOCTYPE robot [{"".join(lines)}]>'


ROBOT = '<robot name="attack"><link name="{name}"/><link name="b"/>' \
        '<joint name="j" type="fixed"><parent link="{name}"/><child link="b"/></joint></robot>'


def attack_documents(secret_uri: str, fifo_uri: str, http_url: str) -> dict[str, str]:
    """Hostile descriptions by name; each must be refused or parsed without reading anything."""
    blob = 'x' * 100_000
    return {
        'billion-laughs': laughs() + ROBOT.format(name='&lol9;'),
        'billion-laughs-in-attribute': laughs() + '<robot name="&lol9;"><link name="a"/></robot>',
        'quadratic-blowup': f'<!DOCTYPE robot [<!ENTITY a "{blob}">]>'
                            + ROBOT.format(name='&a;' * 20_000),
        'parameter-entity-bomb': '<!DOCTYPE robot [<!ENTITY % p0 "x">'
                                 + ''.join(f'<!ENTITY % p{k} "{f"%p{k - 1};" * 10}">'
                                           for k in range(1, 8))
                                 + '%p7;]>' + ROBOT.format(name='a'),
        'external-entity-file': f'<!DOCTYPE robot [<!ENTITY s SYSTEM "{secret_uri}">]>'
                                + ROBOT.format(name='&s;'),
        'external-entity-fifo': f'<!DOCTYPE robot [<!ENTITY s SYSTEM "{fifo_uri}">]>'
                                + ROBOT.format(name='&s;'),
        'external-entity-http': f'<!DOCTYPE robot [<!ENTITY s SYSTEM "{http_url}/e">]>'
                                + ROBOT.format(name='&s;'),
        'external-parameter-entity': f'<!DOCTYPE robot [<!ENTITY % d SYSTEM "{http_url}/p">%d;]>'
                                     + ROBOT.format(name='&leak;'),
        'external-dtd-file': f'<!DOCTYPE robot SYSTEM "{secret_uri}">' + ROBOT.format(name='a'),
        'external-dtd-fifo': f'<!DOCTYPE robot SYSTEM "{fifo_uri}">' + ROBOT.format(name='a'),
        'external-dtd-http': f'<!DOCTYPE robot SYSTEM "{http_url}/robot.dtd">'
                             + ROBOT.format(name='&leak;'),
        'public-dtd-http': f'<!DOCTYPE robot PUBLIC "-//X//DTD Robot//EN" "{http_url}/pub.dtd">'
                           + ROBOT.format(name='a'),
        'bare-doctype': '<!DOCTYPE robot>' + ROBOT.format(name='a'),
        'undeclared-entity': ROBOT.format(name='&s;'),
        'deep-nesting': '<robot name="r"><link name="a"/>' + '<x>' * 100_000
                        + '</x>' * 100_000 + '</robot>',
        'xinclude': ('<robot name="r" xmlns:xi="http://www.w3.org/2001/XInclude">'
                     f'<link name="a"/><xi:include href="{secret_uri}" parse="text"/>'
                     f'<xi:include href="{http_url}/x" parse="text"/></robot>'),
        'xml-stylesheet': (f'<?xml-stylesheet type="text/xsl" href="{http_url}/s.xsl"?>'
                           + ROBOT.format(name='a')),
        'schema-location': ('<robot name="r" xmlns:xsi="http://www.w3.org/2001/XMLSchema-'
                            f'instance" xsi:schemaLocation="urn:x {http_url}/s.xsd">'
                            '<link name="a"/></robot>'),
        'many-attributes': '<robot name="r"><link name="a" '
                           + ' '.join(f'a{k}="{k}"' for k in range(5_000)) + '/></robot>',
        'many-namespaces': '<robot name="r" '
                           + ' '.join(f'xmlns:n{k}="urn:{k}"' for k in range(20_000))
                           + '><link name="a"/></robot>',
    }


# Outcome per attack: refused with a message containing the phrase, or accepted. A DOCTYPE is
# read as robot_state_publisher's TinyXML2 reads it, skipped to its first '>': nothing it
# declares is expanded or fetched, and a reference to it stays in the name as written.
ATTACK_OUTCOMES = {
    'billion-laughs': 'accepted',
    'billion-laughs-in-attribute': 'accepted',
    'quadratic-blowup': 'accepted',
    'parameter-entity-bomb': 'accepted',
    'external-entity-file': 'accepted',
    'external-entity-fifo': 'accepted',
    'external-entity-http': 'accepted',
    'external-parameter-entity': 'accepted',
    'external-dtd-file': 'accepted',
    'external-dtd-fifo': 'accepted',
    'external-dtd-http': 'accepted',
    'public-dtd-http': 'accepted',
    'bare-doctype': 'accepted',
    'undeclared-entity': 'accepted',
    'deep-nesting': 'levels deep',
    'xinclude': 'accepted',
    'xml-stylesheet': 'accepted',
    'schema-location': 'accepted',
    'many-attributes': 'accepted',
    'many-namespaces': 'accepted',
}
# The links of each accepted attack: what its own elements name, nothing included or expanded.
ACCEPTED_LINKS = {
    'billion-laughs': ('&lol9;', 'b'),
    'billion-laughs-in-attribute': ('a',),
    'quadratic-blowup': ('&a;' * 20_000, 'b'),
    'parameter-entity-bomb': ('a', 'b'),
    'external-entity-file': ('&s;', 'b'),
    'external-entity-fifo': ('&s;', 'b'),
    'external-entity-http': ('&s;', 'b'),
    'external-parameter-entity': ('&leak;', 'b'),
    'external-dtd-file': ('a', 'b'),
    'external-dtd-fifo': ('a', 'b'),
    'external-dtd-http': ('&leak;', 'b'),
    'public-dtd-http': ('a', 'b'),
    'bare-doctype': ('a', 'b'),
    'undeclared-entity': ('&s;', 'b'),
    'xinclude': ('a',),
    'xml-stylesheet': ('a', 'b'),
    'schema-location': ('a',),
    'many-attributes': ('a',),
    'many-namespaces': ('a',),
}
# Encodings the attacks are also sent in (the refusal must not depend on a byte pattern).
ATTACK_ENCODINGS = ['str', 'utf-8', 'utf-16', 'utf-16-le', 'utf-32', 'utf-7', 'cp037']


def encode_attack(text: str, encoding: str) -> str | bytes:
    if encoding == 'str':
        return text
    declaration = f'<?xml version="1.0" encoding="{encoding.upper()}"?>'
    if encoding in ('utf-16', 'utf-32'):
        declaration = ''  # a BOM says it all
    return (declaration + text).encode(encoding)


@pytest.fixture(scope='module')
def attack_set(secret_file: Path, http_server, tmp_path_factory: pytest.TempPathFactory):
    """The attack documents (built once), the named pipe they name and the server's hits."""
    url, hits = http_server
    pipe_directory = tmp_path_factory.mktemp('pipe')
    documents = attack_documents(secret_file.as_uri(), FifoWatch(pipe_directory).path.as_uri(),
                                 url)
    encoded = {(name, encoding): encode_attack(text, encoding)
               for name, text in documents.items() for encoding in ATTACK_ENCODINGS}
    return encoded, pipe_directory, hits


@pytest.fixture
def attack_env(attack_set):
    encoded, pipe_directory, hits = attack_set
    hits.clear()
    with FifoWatch(pipe_directory) as fifo:
        yield encoded, fifo, hits


@pytest.mark.parametrize('encoding', ATTACK_ENCODINGS)
@pytest.mark.parametrize('attack', sorted(ATTACK_OUTCOMES))
def test_xml_attack_is_refused_or_harmless(attack: str, encoding: str, attack_env) -> None:
    """Refused for the expected reason or built from its own elements only, reading nothing.

    An expansion that ran away would be stopped by the CPU-time limit and fail the test.
    """
    encoded, fifo, hits = attack_env
    document = encoded[attack, encoding]
    with cpu_time_limit(CASE_CPU_LIMIT_S):
        result = load(document)
    expected = ATTACK_OUTCOMES[attack]
    if isinstance(result, DescriptionError):
        message = str(result)
        # EBCDIC (cp037): the encoding itself is refused, before any markup is read
        assert expected in message or (encoding == 'cp037' and 'EBCDIC' in message), message
        assert SECRET not in message
        assert len(message) < 400, message
    else:
        assert expected == 'accepted', f'{attack} was accepted'
        assert SECRET not in repr(result.description)
        assert result.links == ACCEPTED_LINKS[attack]
    assert not fifo.opened, 'the parser opened the named pipe'
    assert hits == [], f'the parser fetched {hits}'


@fuzz_settings(HOSTILE_EXAMPLES)
@given(data=st.data())
def test_fuzz_hostile_fragments_never_leak(data: st.DataObject, secret_file: Path) -> None:
    """DOCTYPE, entity, XInclude and PI fragments spliced anywhere, in any encoding."""
    uri = secret_file.as_uri()
    fragments = [
        f'<!DOCTYPE robot [<!ENTITY s SYSTEM "{uri}">]>', '&s;', '&lol;',
        f'<!DOCTYPE robot SYSTEM "{uri}">', f'<!ENTITY s SYSTEM "{uri}">',
        f'<!DOCTYPE robot [<!ENTITY % p SYSTEM "{uri}">%p;]>', laughs(3), '&lol3;',
        f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{uri}" parse="text"/>',
        f'<?xml-stylesheet href="{uri}"?>', f'<!ATTLIST link name CDATA "{uri}">',
        '<!DOCTYPE robot [', ']>', '<!ELEMENT robot ANY>', '<![CDATA[&s;]]>']
    text = etree.tostring(SAMPLE_TREE, encoding='unicode')
    for _ in range(data.draw(st.integers(1, 4), label='fragments')):
        at = data.draw(st.integers(0, len(text)), label='at')
        text = text[:at] + data.draw(st.sampled_from(fragments), label='fragment') + text[at:]
    encoding = data.draw(st.sampled_from(['str', 'utf-8', 'utf-16', 'utf-32-le', 'latin-1']))
    document = text if encoding == 'str' else text.encode(encoding)
    with cpu_time_limit(CASE_CPU_LIMIT_S):
        result = load(document)
    seen = str(result) if isinstance(result, DescriptionError) else repr(result.description)
    # Accepted or refused, nothing a declaration names was read: the secret is nowhere.
    assert SECRET not in seen


# Bounded error messages ------------------------------------------------------------------

def chain_text(count: int, *, kind: str = 'continuous', cycle: bool = False,
               every: int = 1) -> str:
    """A chain of `count` links; every `every`-th joint of type `kind`, the others fixed."""
    links = ''.join(f'<link name="link_{i}"/>' for i in range(count))
    joints = []
    for i in range(count - 1):
        joint_type = kind if i % every == every - 1 else 'fixed'
        axis = '<axis xyz="0 0 1"/>' if joint_type != 'fixed' else ''
        joints.append(f'<joint name="joint_{i}" type="{joint_type}"><parent link="link_{i}"/>'
                      f'<child link="link_{i + 1}"/><origin xyz="0.001 0 0" rpy="0 0 0.01"/>'
                      f'{axis}</joint>')
    if cycle:
        joints.append(f'<joint name="closing" type="fixed"><parent link="link_{count - 1}"/>'
                      '<child link="link_0"/></joint>')
    return f'<robot name="chain_{count}">{links}{"".join(joints)}</robot>'


def many_roots(count: int) -> str:
    return '<robot name="r">' + ''.join(f'<link name="root_{i}"/>' for i in range(count)) \
        + '</robot>'


def mimic_ring(count: int) -> str:
    links = ''.join(f'<link name="l{i}"/>' for i in range(count + 1))
    joints = ''.join(
        f'<joint name="j{i}" type="continuous"><parent link="l0"/><child link="l{i + 1}"/>'
        f'<axis xyz="0 0 1"/><mimic joint="j{(i + 1) % count}"/></joint>' for i in range(count))
    return f'<robot name="r">{links}{joints}</robot>'


MESSAGE_LIMIT = 2000


@pytest.mark.parametrize('document, phrase', [
    pytest.param(chain_text(10_000, cycle=True), 'cycle', id='10k-link-cycle'),
    pytest.param(many_roots(10_000), 'root links', id='10k-roots'),
    pytest.param(mimic_ring(5_000), 'mimic cycle', id='5k-mimic-ring'),
    pytest.param(chain_text(20, cycle=True), 'cycle', id='20-link-cycle'),
    pytest.param('<robot name="r">' + '<link name="a"/>' * 10_000 + '</robot>', 'twice',
                 id='10k-duplicate-links'),
    pytest.param('<robot name="' + 'n' * 1_000_000 + '"/>', 'no links', id='1MB-robot-name'),
    pytest.param('<robot name="r"><link name="a"/><joint name="' + 'j' * 1_000_000
                 + '" type="x"/></robot>', 'unknown type', id='1MB-joint-name'),
])
def test_error_messages_stay_short(document: str, phrase: str) -> None:
    with cpu_time_limit(CASE_CPU_LIMIT_S):
        error = load(document)
    assert isinstance(error, DescriptionError)
    assert phrase in str(error)
    assert len(str(error)) <= MESSAGE_LIMIT, f'message of {len(str(error))} characters'


# Big inputs -------------------------------------------------------------------------------

# Builds a document in a child process, parses it there, reports time and peak memory. The
# child measures its own baseline (imports done) before building, so that only the document
# and its parse are counted.
CHILD = r"""
import json, sys, time
from urdf_state_publisher import DescriptionError, RobotModel
kind, megabytes = sys.argv[1], float(sys.argv[2])
size = int(megabytes * 1e6)
sample = open(sys.argv[3]).read()
head = '<robot name="sample_arm">'
def high_water_mark():
    # VmHWM, not ru_maxrss: a child inherits its parent's ru_maxrss, not its VmHWM
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) * 1024
baseline = high_water_mark()
if kind == 'comment':
    text = sample.replace(head, head + '<!--' + 'c' * size + '-->')
elif kind == 'comments':
    text = sample.replace(head, head + '<!-- many small comments -->' * (size // 28))
elif kind == 'text':
    text = sample.replace(head, head + '<gazebo>' + 't' * size + '</gazebo>')
elif kind == 'attribute':
    text = sample.replace(head, head[:-1] + ' note="' + 'a' * size + '">')
elif kind == 'visuals':
    visual = ('<visual><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><box size="0.1 0.2 0.3"/>'
              '</geometry></visual>')
    text = sample.replace('<link name="base_footprint"/>',
                          '<link name="base_footprint">' + visual * (size // len(visual))
                          + '</link>')
elif kind == 'links':
    item = ('<link name="L{0}"><visual><geometry><box size="1 1 1"/></geometry></visual></link>'
            '<joint name="J{0}" type="fixed"><parent link="base_footprint"/>'
            '<child link="L{0}"/></joint>')
    text = sample.replace('</robot>', ''.join(item.format(i) for i in range(size // 170))
                          + '</robot>')
start = time.perf_counter()
try:
    model = RobotModel.from_urdf(text)
    outcome = f'accepted: {len(model.links)} links'
except DescriptionError as error:
    outcome = 'refused: ' + str(error)[:200]
elapsed = time.perf_counter() - start
peak = high_water_mark()
print(json.dumps({'bytes': len(text), 'outcome': outcome, 'seconds': elapsed,
                  'extra_mb': (peak - baseline) / 1e6}))
"""


def measure_in_child(kind: str, megabytes: float, timeout: float) -> dict:
    """Parse a generated document of about `megabytes` MB in a child; time and memory."""
    try:
        completed = subprocess.run(
            [sys.executable, '-c', CHILD, kind, str(megabytes), str(SAMPLE_URDF)],
            capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f'{megabytes} MB of {kind}: still parsing after {timeout} s')
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    print(f'\n{megabytes} MB of {kind}: {result}')
    return result


# A description is handled in bounded memory: at most this many bytes of extra memory per byte
# of input. The child's own timeout only bounds how long the test waits for a hung parse.
MEMORY_PER_BYTE = 4.0
CHILD_TIMEOUT_S = 120.0


def assert_refused_for_its_size(result: dict) -> None:
    """Refused by the size check, which runs before the XML parser sees a byte."""
    assert result['bytes'] >= 50e6
    assert result['outcome'].startswith(
        f"refused: robot description is {result['bytes']} bytes"), result['outcome']
    assert 'more than the 32 MiB this node accepts' in result['outcome'], result['outcome']
    assert result['extra_mb'] * 1e6 < MEMORY_PER_BYTE * result['bytes']


@pytest.mark.parametrize('kind', ['comment', 'text', 'attribute'])
def test_50mb_description_is_refused_before_parsing_in_bounded_memory(kind: str) -> None:
    assert_refused_for_its_size(measure_in_child(kind, 50, timeout=CHILD_TIMEOUT_S))


@pytest.mark.slow
@pytest.mark.parametrize('kind', ['visuals', 'links', 'comments'])
def test_50mb_description_of_many_elements(kind: str) -> None:
    assert_refused_for_its_size(measure_in_child(kind, 50, timeout=CHILD_TIMEOUT_S))


def padded_with_visuals(size: int) -> str:
    """The sample arm with about `size` bytes of <visual> elements in one link."""
    visual = ('<visual><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><box size="0.1 0.2 0.3"/>'
              '</geometry></visual>')
    return SAMPLE_URDF.read_text().replace(
        '<link name="base_footprint"/>',
        '<link name="base_footprint">' + visual * (size // len(visual)) + '</link>')


def test_visual_elements_are_parsed_not_read() -> None:
    """A URDF 1.0 link's contents cost the XML parser's time only: no Python work per element.

    (The loader once took ~1.1 s for 2 MB of them, where lxml alone needs ~40 ms.)
    """
    small, large = padded_with_visuals(20_000), padded_with_visuals(2_000_000)
    model = RobotModel.from_urdf(large)
    assert set(model.links) == {e.get('name') for e in SAMPLE_TREE.iter('link')}
    assert model.warnings == ()
    extra_elements = large.count('<') - small.count('<')
    small_steps = python_steps(lambda: RobotModel.from_urdf(small))
    assert small_steps > 100  # the count sees the loader's work
    extra_steps = python_steps(lambda: RobotModel.from_urdf(large)) - small_steps
    assert extra_steps < extra_elements / 100, (
        f'{extra_elements} more elements took {extra_steps} more steps')


def test_repeated_visuals_of_a_1_2_link_are_checked_once() -> None:
    """A 1.2 link's shapes are checked once per distinct shape: a repeated visual costs a few
    steps more than in 1.1 (its origin's look-up), not a check of its box each time."""
    def extra_steps(version: str) -> float:
        small, large = (declared(padded_with_visuals(size), version)
                        for size in (20_000, 220_000))
        extra_visuals = large.count('<visual>') - small.count('<visual>')
        small_steps = python_steps(lambda: RobotModel.from_urdf(small))
        large_steps = python_steps(lambda: RobotModel.from_urdf(large))
        return (large_steps - small_steps) / extra_visuals

    per_visual_1_1, per_visual_1_2 = extra_steps('1.1'), extra_steps('1.2')
    assert per_visual_1_1 > 1  # the count sees the 1.1 origin check
    assert per_visual_1_2 < 3 * per_visual_1_1, (per_visual_1_1, per_visual_1_2)


def declared(text: str, version: str) -> str:
    """`text` (a <robot> without a version attribute) declaring URDF `version`."""
    assert text.count('<robot name=') == 1
    return text.replace('<robot name=', f'<robot version="{version}" name=', 1)


def test_10000_link_chain_builds_and_updates() -> None:
    """Every joint continuous about z, each origin 1 mm along x turned 0.01 rad about z: the
    tip pose is a planar sum, computed here directly."""
    model = RobotModel.from_urdf(chain_text(10_000))
    assert len(model.links) == 10_000
    names = [f'joint_{i}' for i in range(9_999)]
    values = np.linspace(-3, 3, len(names))
    first = model.update(names, values)
    again = model.update(names, values)
    assert again.plan is first.plan  # planned once
    assert again.plan.joints == tuple(names) and again.non_finite == () and again.clamped == ()
    assert_finite_unit(again.transforms, '10k chain')
    yaw = np.cumsum(0.01 + values)  # of link_1 ... link_9999
    heading = np.concatenate(([0.0], yaw[:-1]))  # of each joint's parent, where its origin is
    expected = homogeneous((0.001 * np.cos(heading).sum(), 0.001 * np.sin(heading).sum(), 0.0),
                           rodrigues((0.0, 0.0, 1.0), yaw[-1]))
    tip = model.frame_pose('link_9999', dict(zip(names, values)))
    assert np.abs(pose_matrix(tip) - expected).max() < 1e-9


def mimic_chain(depth: int) -> str:
    links = ''.join(f'<link name="l{i}"/>' for i in range(depth + 1))
    joints = ''.join(
        f'<joint name="j{i}" type="continuous"><parent link="l0"/><child link="l{i + 1}"/>'
        '<axis xyz="0 0 1"/>' + (f'<mimic joint="j{i - 1}"/>' if i else '') + '</joint>'
        for i in range(depth))
    return f'<robot name="r">{links}{joints}</robot>'


def test_deep_mimic_chain_plans_in_linear_time() -> None:
    small, large = (RobotModel.from_urdf(mimic_chain(depth)) for depth in (400, 1600))
    update = large.update(['j0'], [0.1])
    assert update.plan.joints == tuple(f'j{i}' for i in range(1600))
    assert update.values.tolist() == [0.1] * 1600
    fresh = iter(range(10**6))

    def plan(model: RobotModel) -> None:  # a name list never seen: planned, not cached
        model.update(['j0', f'unknown_{next(fresh)}'], [0.1, 0.0])

    ratio = python_steps(lambda: plan(large)) / python_steps(lambda: plan(small))
    # 4x the depth: ~4x the steps if linear, ~16x if quadratic
    assert ratio < 8, f'4x deeper chain took {ratio:.1f}x the steps'


def test_plan_cache_memory_is_bounded() -> None:
    import tracemalloc

    model = RobotModel.from_file(SAMPLE_URDF)
    tracemalloc.start()
    try:
        for k in range(260):
            names = [f'no_such_joint_{k}_{i}' for i in range(600)] + ['elbow_joint']
            model.update(names, np.zeros(len(names)))
        del names
        retained = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert retained < 4e6, f'{retained / 1e6:.0f} MB retained by 260 random name lists'


def test_warnings_of_a_junk_filled_description_are_bounded() -> None:
    """The first 50 warnings are kept, the rest only counted (as parse_description says);
    junk that is no near miss is counted as extensions, not warned about."""
    model = RobotModel.from_urdf('<robot name="r"><link name="a"/>' + '<jiont/>' * 50_000
                                 + '<junk/>' * 30_000 + '</robot>')
    typo = 'unknown element <jiont> (line 1) in <robot> ignored: did you mean <joint>?'
    assert model.warnings == (typo,) * 50 + ('... and 49950 more warnings',)
    assert model.extensions.total == 30_000


def test_jvrc1_and_sample_load_without_warnings() -> None:
    """The seeds of the mutation fuzz are themselves sound."""
    for path, tree in ((SAMPLE_URDF, SAMPLE_TREE), (jvrc1_path(), JVRC1_TREE)):
        model = RobotModel.from_file(path)
        assert set(model.links) | {s.name for s in model.sensors} == _frames(tree)
        assert overflow_free(model)
        assert model.warnings == ()


"""Where each recorded topic goes in a bag run, decided from names alone (recorded.routing)."""

from __future__ import annotations

import pytest

from urdf_state_publisher.recorded.routing import our_topics, Role, route, TopicNames

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

NAMES = TopicNames(tf='/tf', tf_static='/tf_static', diagnostics='/diagnostics',
                   description='/robot_description', multi_dof='/multi_dof_joint_states',
                   sources=('/joint_states', '/gripper/joint_states'), resolved=None,
                   description_given=False)
RECORDED = {1: '/joint_states', 2: '/gripper/joint_states', 3: '/multi_dof_joint_states',
            4: '/robot_description', 5: '/tf', 6: '/tf_static', 7: '/diagnostics',
            8: '/camera/image', 9: '/arm/joint_states'}


def test_each_recorded_topic_has_the_role_its_name_gives_it():
    assert route(RECORDED, NAMES) == {
        1: Role.FEED, 2: Role.FEED, 3: Role.FEED, 4: Role.FEED, 5: Role.TRANSFORMS,
        6: Role.TRANSFORMS, 7: Role.DIAGNOSTICS, 8: Role.COPY,
        9: Role.COPY}  # a JointState topic not in source_list is only copied


def test_a_description_given_replaces_the_recorded_one():
    given = TopicNames(**{**NAMES.__dict__, 'description_given': True})
    assert route(RECORDED, given)[4] is Role.REPLACED
    assert list(our_topics(given)) == ['/tf', '/tf_static', '/diagnostics',
                                       '/robot_description']


@pytest.mark.parametrize('namespace', ['', '/resolved'])
def test_the_resolved_state_is_among_the_runs_own_topics(namespace):
    names = TopicNames(**{**NAMES.__dict__, 'resolved': f'{namespace}/joint_states',
                          'sources': ('/joint_states',)})
    ours = our_topics(names)
    assert ours[f'{namespace}/joint_states'][0] == 'sensor_msgs/msg/JointState'
    # Recorded where the resolved state goes, the recording's states are the run's to write
    # (recorded.run refuses that before routing); elsewhere they are read and copied.
    assert route({1: '/joint_states'}, names)[1] is (Role.REPLACED if not namespace
                                                     else Role.FEED)


def test_topics_remapped_as_the_node_remaps_them_are_routed_by_their_new_names():
    remapped = TopicNames(**{**NAMES.__dict__, 'tf': '/robot/tf', 'diagnostics': '/robot/diag'})
    roles = route({1: '/tf', 2: '/robot/tf', 3: '/robot/diag', 4: '/diagnostics'}, remapped)
    assert roles == {1: Role.COPY, 2: Role.TRANSFORMS, 3: Role.DIAGNOSTICS, 4: Role.COPY}

"""Which recorded transforms are the robot's, and the distro an input's bag version calls for."""

import pytest

from urdf_state_publisher.recorded.frames import sort_recorded, tf2_name
from urdf_state_publisher.recorded.output import distro_of_version, METADATA_VERSIONS
from urdf_state_publisher.wire.tf import RecordedTransform

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

POSE = (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)


def recorded(parent: str, child: str) -> RecordedTransform:
    return RecordedTransform(5, 6, parent, child, POSE)


def test_tf2_strips_one_leading_slash():
    assert [tf2_name(f) for f in ('/base_link', 'base_link', '//x', '')] == \
        ['base_link', 'base_link', '/x', '']


def test_the_robots_frames_are_replaced_with_or_without_a_slash_and_the_rest_kept_renamed():
    published = {'robot1/base_link', 'robot1/arm_link'}  # frame_prefix robot1/
    transforms = [recorded('/odom', '/robot1/base_footprint'),
                  recorded('/robot1/base_footprint', '/robot1/base_link'),
                  recorded('robot1/base_link', 'robot1/arm_link'),
                  recorded('map', 'odom')]
    kept, replaced = sort_recorded(transforms, published)
    assert replaced == 2
    assert kept == [recorded('odom', 'robot1/base_footprint'), recorded('map', 'odom')]
    assert kept[1] is transforms[3]  # nothing to rename: the very record


@pytest.mark.parametrize(('version', 'distro'), [
    (3, 'humble'), (5, 'humble'), (8, 'humble'), (9, 'jazzy'), (12, 'jazzy')])
def test_an_input_is_written_for_the_oldest_distro_that_plays_what_it_played(version, distro):
    """Humble reads every version up to 8 (string QoS); 9 is Jazzy's, Kilted's, Lyrical's."""
    assert distro_of_version(version) == distro
    assert METADATA_VERSIONS[distro] <= max(version, METADATA_VERSIONS['humble'])

"""Recorded transforms beside computed ones: which are the robot's; their names as tf2 reads them.

ROS 1 named frames with a leading slash (`/base_link`, from the tf_prefix era); tf2 strips it on
receipt, so `/base_link` and `base_link` are one frame. A recorded transform is the robot's, and
is replaced by the computed one, when its child frame, so read, is one the description publishes
(with its frame_prefix), or one that a description recorded in the bag and replaced by the run's
published (an earlier output processed again with a corrected description: the frames it
renamed or removed go too, not only those it kept). The others are kept, their frame names
written as tf2 reads them: a
consumer that does not strip the slash itself (a viewer reading the bag) then sees one tree, the
recorded transforms joined to the computed ones, not two.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from urdf_state_publisher.wire.tf import RecordedTransform

__all__ = ['published_children', 'tf2_name', 'sort_recorded']


def tf2_name(frame: str) -> str:
    """The frame as tf2 reads it: without one leading slash."""
    return frame[1:] if frame.startswith('/') else frame


def published_children(model: Any, frame_prefix: str) -> frozenset[str]:
    """The child frames of every transform a RobotModel publishes, with `frame_prefix`.

    Its moving joints' on /tf, as a JointStream lists them; its fixed joints' and sensors' on
    /tf_static.
    """
    moving = {model.joint(name).child for name in model.scalar_joints + model.pose_joints}
    static = {transform.child for transform in model.static_transforms()}
    return frozenset(frame_prefix + child for child in moving | static)


def sort_recorded(transforms: Sequence[RecordedTransform], published: Collection[str]
                  ) -> tuple[list[RecordedTransform], int]:
    """The transforms to keep, named as tf2 reads them, and how many the robot's replace.

    `published`: the child frames the description publishes, prefix included.
    """
    kept = []
    for transform in transforms:
        child = tf2_name(transform.child)
        if child in published:
            continue
        parent = tf2_name(transform.parent)
        if child is not transform.child or parent is not transform.parent:
            transform = transform._replace(parent=parent, child=child)
        kept.append(transform)
    return kept, len(transforms) - len(kept)

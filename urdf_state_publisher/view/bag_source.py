"""A recording as the view shows it: its transforms on a timeline, and its description.

`Timeline` is pure: the transforms of /tf and /tf_static by log time, and the tree of transforms
at any moment, which a scrub back rebuilds from the start. `read_recording` reads a bag through
the bag command's readers (rosbag2 or ROS 1, by rosbags). `BagLink` is what the page reads in
place of the ROS link: the tree at the timeline's current moment.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
import threading

from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.view.scene import TransformTree

__all__ = ['BagLink', 'Recording', 'Timeline', 'read_recording']

TF_TOPICS = ('/tf', '/tf_static')
DESCRIPTION_TOPIC = '/robot_description'
TF_TYPE = 'tf2_msgs/msg/TFMessage'

Transform = tuple[str, str, Pose]  # parent, child, pose
# Moments between two kept trees: a seek back applies fewer than this many again.
SNAPSHOT_EVERY = 256


class Timeline:
    """Transforms by log time: `static` (latched, known from the start) and `moments`."""

    def __init__(self, static: list[Transform], moments: list[tuple[int, list[Transform]]]):
        self.static = static
        self.moments = sorted(moments, key=lambda moment: moment[0])
        self._times = [time for time, _ in self.moments]
        self.start_ns = self._times[0] if self._times else 0
        self.end_ns = self._times[-1] if self._times else 0
        self.tree = TransformTree()
        for parent, child, pose in self.static:
            self.tree.set(parent, child, pose)
        # The tree after each SNAPSHOT_EVERY-th moment, kept as a seek passes it: a seek back
        # starts from the last one before it, not from the start of a long recording.
        self._snapshots = [self.tree.snapshot()]
        self._applied = 0  # moments in `tree`

    def seek(self, time_ns: int) -> TransformTree:
        """The tree as it stood at `time_ns`: every transform logged until then, the latest."""
        wanted = bisect.bisect_right(self._times, time_ns)
        if wanted < self._applied:
            kept = min(wanted // SNAPSHOT_EVERY, len(self._snapshots) - 1)
            self.tree.restore(self._snapshots[kept])
            self._applied = kept * SNAPSHOT_EVERY
        while self._applied < wanted:
            for parent, child, pose in self.moments[self._applied][1]:
                self.tree.set(parent, child, pose)
            self._applied += 1
            if self._applied == len(self._snapshots) * SNAPSHOT_EVERY:
                self._snapshots.append(self.tree.snapshot())
        return self.tree


@dataclass
class Recording:
    """What the view takes from a bag."""

    timeline: Timeline
    description: str | None  # the last robot_description recorded, if any


def _transforms(data: bytes) -> list[Transform]:
    from urdf_state_publisher.wire.tf import read_tf_message

    return [(t.parent.lstrip('/'), t.child.lstrip('/'), Pose(t.values[:3], t.values[3:]))
            for t in read_tf_message(data)]


def read_recording(path) -> Recording:
    """The transforms and description of the bag at `path` (BagInputError when unreadable)."""
    from pathlib import Path

    from urdf_state_publisher.recorded.input import open_bag
    from urdf_state_publisher.wire.cdr import read_string_message

    bag = open_bag(Path(path))
    try:
        roles = {topic.id: topic.topic for topic in bag.topics
                 if (topic.topic in TF_TOPICS and topic.msgtype == TF_TYPE)
                 or (topic.topic == DESCRIPTION_TOPIC
                     and topic.msgtype == 'std_msgs/msg/String')}
        static, moments, description = [], [], None
        for topic_id, time_ns, data in bag.messages(set(roles)):
            topic = roles[topic_id]
            if topic == DESCRIPTION_TOPIC:
                description = read_string_message(data)
            elif topic == '/tf_static':
                static += _transforms(data)
            else:
                moments.append((time_ns, _transforms(data)))
    finally:
        bag.close()
    return Recording(Timeline(static, moments), description)


class BagLink:
    """The page's source of transforms for a recording: the timeline at its current moment."""

    def __init__(self, timeline: Timeline):
        self.lock = threading.Lock()
        self.timeline = timeline
        self.tree = timeline.seek(timeline.start_ns)
        self.changed = True
        self.time_ns = timeline.start_ns

    def seek(self, time_ns: int) -> None:
        """Show the moment `time_ns` of the recording."""
        with self.lock:
            self.time_ns = min(max(int(time_ns), self.timeline.start_ns), self.timeline.end_ns)
            self.tree = self.timeline.seek(self.time_ns)
            self.changed = True

    def close(self) -> None:
        """Nothing to release: the recording was read whole."""

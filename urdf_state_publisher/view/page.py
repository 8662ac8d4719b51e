"""The page: the robot's visuals in viser's scene, posed from the transforms, and the GUI.

The scene holds a frame per link, nested as the description's tree (`/robot/0/3/7`: each name
the link's index, under its parent link's frame), whose pose is the link's in its parent
link, as the transforms give it; the link's visuals are its children, at their origins. So
the browser composes the chains, and a tick sends each link's change alone: a revolute or
continuous joint's link turns (one message) and a prismatic one's slides, where a link posed
in the root would need both for every link below a moving joint. viser's setters cost about
17 us each (its numpy check of a change): 140 links took 5 ms a tick posed in the root.
A link whose transform is missing is hidden, and with it everything below it, as RViz shows
"No transform" for a link whose chain to the fixed frame is incomplete.
"""

from __future__ import annotations

import numpy as np
import trimesh

from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.kinematics.model import RobotModel
from urdf_state_publisher.view.scene import joint_values, MeshPathError, read_visuals, resolve_mesh
from urdf_state_publisher.view.sliders import SliderSet

__all__ = ['Page']


def _rgb(rgba) -> tuple[int, int, int]:
    return tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in rgba[:3])


def _wxyz(rotation) -> tuple[float, float, float, float]:
    x, y, z, w = rotation
    return (w, x, y, z)


class Page:
    """What one robot description puts on the page; `remove` takes it off again."""

    def __init__(self, server, description: str, link, package_paths, find_package,
                 description_dir, *, sliders: bool, frame_prefix: str):
        self.server = server
        self.link = link
        self.model = RobotModel.from_urdf(description)
        self.frame_prefix = frame_prefix
        self.handles = []
        self.frames = {}
        scene = server.scene
        self._aim_camera()
        # Each link under its parent link (the root: under none); links come parents first.
        self.parent_link = {j.child: j.parent for j in self.model.description.joints}
        paths = {}
        for index, name in enumerate(self.model.links):
            parent = self.parent_link.get(name)
            paths[name] = f'{paths[parent] if parent else "/robot"}/{index}'
            frame = scene.add_frame(paths[name], show_axes=False, axes_length=0.1,
                                    axes_radius=0.004, visible=parent is None)
            self.frames[name] = frame
            self.handles.append(frame)
        self.labels = []
        for name in self.model.links:
            label = scene.add_label(f'{paths[name]}/name', name, visible=False)
            self.labels.append(label)
            self.handles.append(label)
        self.missing = []
        for number, visual in enumerate(read_visuals(description)):
            parent = f'{paths[visual.link]}/visual_{number}'
            where = dict(position=visual.origin.translation, wxyz=_wxyz(visual.origin.rotation))
            color = _rgb(visual.rgba)
            opacity = visual.rgba[3] if visual.rgba[3] < 1.0 else None
            if visual.shape == 'box':
                handle = scene.add_box(parent, color=color, dimensions=visual.size,
                                       opacity=opacity, **where)
            elif visual.shape == 'sphere':
                handle = scene.add_icosphere(parent, radius=visual.size[0], color=color,
                                             opacity=opacity, **where)
            elif visual.shape == 'cylinder':
                # viser's cylinder is along y; URDF's along z.
                handle = scene.add_mesh_simple(
                    parent, *_arrays(trimesh.creation.cylinder(*visual.size, sections=32)),
                    color=color, opacity=opacity, **where)
            elif visual.shape == 'capsule':
                handle = scene.add_mesh_simple(
                    parent, *_arrays(trimesh.creation.capsule(visual.size[1], visual.size[0])),
                    color=color, opacity=opacity, **where)
            else:
                try:
                    path = resolve_mesh(visual.mesh, package_paths, find_package,
                                        description_dir)
                    mesh = trimesh.load(path, force='mesh')
                except (MeshPathError, ValueError, OSError) as exc:
                    self.missing.append(str(exc))
                    continue
                mesh.apply_scale(visual.size)
                if visual.colored:
                    handle = scene.add_mesh_simple(parent, *_arrays(mesh), color=color,
                                                   opacity=opacity, **where)
                else:
                    handle = scene.add_mesh_trimesh(parent, mesh, **where)
            self.handles.append(handle)
        gui = server.gui
        self.show_frames = gui.add_checkbox('Frames', False)
        self.show_values = gui.add_checkbox('Joint values', False)
        self.values_text = gui.add_markdown('', visible=False)
        self.handles += [self.show_frames, self.show_values, self.values_text]
        if self.missing:
            self.handles.append(gui.add_markdown(
                '**Not drawn:**\n\n' + '\n'.join(f'- {m}' for m in dict.fromkeys(self.missing))))
        self.sliders = SliderSet(self.model) if sliders else None
        self.slider_handles = {}
        if self.sliders is not None:
            self._add_sliders(gui)
        self._drawn = {}
        self._frames_shown = None

    def _aim_camera(self) -> None:
        """A new page looks at the robot at its default pose, from the front left, above."""
        points = np.array([pose.translation for pose in self.model.frame_poses().values()])
        center = (points.min(axis=0) + points.max(axis=0)) / 2
        distance = max(float(np.ptp(points, axis=0).max()), 0.5) * 1.5
        camera = self.server.initial_camera
        camera.up = (0.0, 0.0, 1.0)
        camera.look_at = tuple(center)
        camera.position = tuple(center + distance * np.array([0.8, 0.6, 0.5]))

    def _add_sliders(self, gui) -> None:
        folder = gui.add_folder('Joints')
        self.handles.append(folder)
        with folder:
            center = gui.add_button('Center')
            randomize = gui.add_button('Randomize')
            self.handles += [center, randomize]
            for slider in self.sliders.sliders:
                handle = gui.add_slider(slider.joint, min=slider.lower, max=slider.upper,
                                        step=(slider.upper - slider.lower) / 1000,
                                        initial_value=slider.center)
                handle.on_update(lambda event, joint=slider.joint: self._moved(joint, event))
                self.slider_handles[slider.joint] = handle
                self.handles.append(handle)

        @center.on_click
        def _(event) -> None:
            self.sliders.center()
            self._show_sliders()

        @randomize.on_click
        def _(event) -> None:
            self.sliders.randomize()
            self._show_sliders()

        self._publish()

    def _moved(self, joint: str, event) -> None:
        value = event.target.value
        if self.sliders.values.get(joint) != value:
            self.sliders.set(joint, value)
            self._publish()

    def _show_sliders(self) -> None:
        for joint, value in self.sliders.values.items():
            self.slider_handles[joint].value = value
        self._publish()

    def _publish(self) -> None:
        self.link.publish(*self.sliders.joint_state())

    def draw(self) -> None:
        """Send each link whose pose in its parent link changed; hide those without one."""
        show_values = self.show_values.value
        with self.link.lock:
            changed = self.link.changed
            self.link.changed = False
            poses = self._link_poses() if changed else None
            # Read when they change, and when the list is opened.
            values = joint_values(self.model, self.link.tree, self.frame_prefix) \
                if show_values and (changed or not self.values_text.visible) else None
        shown = self.show_frames.value
        if shown != self._frames_shown:
            self._frames_shown = shown
            for frame, label in zip(self.frames.values(), self.labels):
                frame.show_axes = shown
                label.visible = shown
        if values is not None:
            self.values_text.content = '\n'.join(
                f'- `{name}`: {value:.4f}' for name, value in values.items()) or '(no /tf yet)'
        self.values_text.visible = show_values
        if poses is None:
            return
        with self.server.atomic():
            for name, pose in poses.items():
                drawn = self._drawn.get(name)
                if pose is None:
                    if drawn is not None:
                        self.frames[name].visible = False
                        self._drawn[name] = None
                    continue
                frame = self.frames[name]
                # Only what changed: a turning link's translation stays as it was.
                if drawn is None or drawn.translation != pose.translation:
                    frame.position = pose.translation
                if drawn is None or drawn.rotation != pose.rotation:
                    frame.wxyz = _wxyz(pose.rotation)
                if drawn is None:
                    frame.visible = True
                self._drawn[name] = pose

    def _link_poses(self) -> dict[str, Pose | None]:
        """Each link's pose in its parent link (the root's: none to send), from the transforms.

        The transform from the parent link's frame itself, as a robot_state_publisher
        publishes it; else through the transforms' own tree (another publisher's shape).
        """
        tree, prefix = self.link.tree, self.frame_prefix
        poses = {}
        for name, parent in self.parent_link.items():
            child_frame, parent_frame = prefix + name, prefix + parent
            pose = tree.transform(parent_frame, child_frame)
            poses[name] = pose if pose is not None else \
                tree.relative(child_frame, parent_frame, prefix + self.model.root)
        return poses

    def remove(self) -> None:
        """Take everything this description put on the page off it."""
        for handle in reversed(self.handles):
            handle.remove()


def _arrays(mesh) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.uint32)

"""Where rclpy differs between the distros this package runs on, each decided here, by capability.

Humble (rclpy 3.3), Jazzy (7.1), Kilted (9.1) and Lyrical (10.0) differ in what the package
uses in three places: the executor, the fastest way to publish serialized bytes, and the
keyword arguments a Node takes. Each is decided by what the installed rclpy has, never by a
distro's name or version, so that a backport or a rewrite changes nothing here. This module
imports rclpy only inside its functions.
"""

from __future__ import annotations

from collections.abc import Callable
import inspect
from typing import Any

__all__ = ['bytes_publisher', 'make_executor', 'node_takes']


def make_executor(context):
    """The cheapest executor this rclpy has, for `context`.

    rclpy's EventsExecutor (rclpy.experimental, from Jazzy's 7.1.4 on, and still there in
    Lyrical's 10.0) costs far less per message than its SingleThreadedExecutor, the one
    executor of older releases such as Humble. Its spin() does not return when the context
    shuts down in the Jazzy and Kilted wheels; process.spin_until_stopped only calls
    spin_once(), which both executors have.
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        from rclpy.executors import SingleThreadedExecutor

        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


def bytes_publisher(publisher: Any) -> Callable[[bytes], None]:
    """The call that publishes serialized bytes on rclpy `publisher`, the fastest this rclpy has.

    `Publisher.handle.publish_raw` (Humble to Kilted) skips what the public
    `Publisher.publish(bytes)` adds around that same call: a type check and holding the
    handle, a few microseconds per message. The handle is private API: Lyrical's rclpy 10
    rewrote publisher.py (ros2/rclpy#1624), and where the handle or its publish_raw is missing,
    the public call, which takes bytes on every distro, is used.
    """
    publish_raw = getattr(getattr(publisher, 'handle', None), 'publish_raw', None)
    return publisher.publish if publish_raw is None else publish_raw


def node_takes(keyword: str) -> bool:
    """Whether this rclpy's Node takes `keyword` (enable_logger_service came with Jazzy)."""
    from rclpy.node import Node

    return keyword in inspect.signature(Node.__init__).parameters

"""The words every command, log and summary shares, so that one thing is said one way.

- Joints that move (revolute, continuous, prismatic, floating, planar) are "moving joints",
  as robot_state_publisher's users say ("moving joints on /tf"), never "movable".
- A count is said with its noun in the right number: "1 warning", "2 warnings".
"""

from __future__ import annotations

__all__ = ['counted']


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and `noun`, the noun plural unless `number` is 1: '1 link', '0 links'.

    `plural` for a noun whose plural is not the singular with an s ('1 index', '2 indices').
    Numbers of 1,000 and more get thousands separators, as the summaries print counts.
    """
    return f'{number:,} ' + (noun if number == 1 else plural or noun + 's')

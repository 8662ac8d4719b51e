"""The error types of urdf_state_publisher."""

__all__ = ['DescriptionError', 'StartupError']


class DescriptionError(ValueError):
    """A robot description that cannot be turned into a model; the message says what and where."""


class StartupError(Exception):
    """A problem that stops a node from starting; the message is for the user."""

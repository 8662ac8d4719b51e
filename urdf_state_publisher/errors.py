"""The error types of urdf_state_publisher."""

__all__ = ['DescriptionError']


class DescriptionError(ValueError):
    """A robot description that cannot be turned into a model; the message says what and where."""

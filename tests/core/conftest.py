from loopback_capture import capture

__all__ = ["capture"]

"""The exporter's exceptions: ExportError (a user-facing error, one line) and
Unsupported (a translation rule's refusal), and one_line for messages."""


class ExportError(Exception):
    """A user-facing error: printed as `torch_export.py: error: ...`."""


class Unsupported(Exception):
    """Raised by a translation rule for arguments it does not handle."""


def one_line(error):
    """An exception's message on one line (PyTorch's span several)."""
    text = " ".join(str(error).split())
    return text if text else type(error).__name__

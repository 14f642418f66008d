"""What every benchmark shares: its figures go out as one JSON object on the last line of stdout."""

import json
import platform
import sys
from typing import Any


def machine() -> dict[str, Any]:
    """A short description of where the figures came from, to print beside them."""
    import os

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def emit(figures: dict[str, Any]) -> None:
    """Print the figures as a single JSON line, the contract every bench/ script keeps."""
    sys.stdout.flush()
    print(json.dumps({**figures, "machine": machine()}, sort_keys=True), flush=True)

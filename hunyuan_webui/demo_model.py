"""``python -m hunyuan_webui.demo_model [--format 1.8b]``: rebuild a demo checkpoint.

The demo models live in :mod:`hunyuan_webui.demo` (:mod:`hunyuan_webui.demo.model`); this module
only keeps the documented command and the old import path working.
"""

from __future__ import annotations

import sys

from hunyuan_webui.demo.model import *  # noqa: F403
from hunyuan_webui.demo.model import _main

if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))

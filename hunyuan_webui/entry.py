"""The ``hunyuan-webui`` command that ``pip install .`` puts on the PATH.

``hunyuan-webui [flags]`` runs the translator exactly as ``bash launch.sh [flags]`` does (``--demo``
for the bundled tiny model); ``hunyuan-webui translate|demo-model|serve ...`` are the command
line's other commands (``python -m hunyuan_webui``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from hunyuan_webui.__main__ import COMMANDS
    from hunyuan_webui.__main__ import main as command

    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        return command(args)
    from hunyuan_webui.app import main as serve

    return serve(args)


if __name__ == "__main__":
    sys.exit(main())

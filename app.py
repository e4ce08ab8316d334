"""Run the translator: ``python app.py --help`` lists every flag (``bash launch.sh`` calls this)."""

import sys

from hunyuan_webui.app import main

if __name__ == "__main__":
    sys.exit(main())

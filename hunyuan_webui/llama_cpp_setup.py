"""Whether ``bash launch.sh`` should install llama-cpp-python before it starts the app.

Without a GPU the launch choice (:mod:`hunyuan_webui.choice`) runs Hy-MT2-1.8B's GGUF through
llama.cpp, which needs llama-cpp-python: a source package that compiles llama.cpp (minutes, once).
The launcher installs it only when the launch would then take that row:
``python -m hunyuan_webui.llama_cpp_setup --needs-llama-cpp [app.py flags]`` exits 0, printing the
choice, in that case, and 1 otherwise (llama-cpp-python there already, a GPU that fits, a model
named, nothing to download).
"""

from __future__ import annotations

import logging
import sys

from hunyuan_webui.choice import AUTO, Choice, MachineProbe, Probe, choose
from hunyuan_webui.core import kinds
from hunyuan_webui.settings import Settings

log = logging.getLogger(__name__)


class _AsIfInstalled:
    """A probe that answers as if llama-cpp-python were installed (the rest: the real answers)."""

    def __init__(self, probe: Probe) -> None:
        self._probe = probe

    def runs_gguf(self) -> bool:
        return True

    def __getattr__(self, name: str):  # noqa: ANN204 - the wrapped probe's methods
        return getattr(self._probe, name)


def needs_llama_cpp(settings: Settings, probe: Probe | None = None) -> Choice | None:
    """The launch's choice when it would run a GGUF through llama.cpp and only llama-cpp-python is
    missing for it (``bash launch.sh`` then installs it); else None."""
    if settings.demo or settings.model != AUTO or not kinds.of(settings.engine).in_app:
        return None
    probe = probe or MachineProbe(settings.gguf_quant)
    if probe.runs_gguf():
        return None
    picked = choose(settings, _AsIfInstalled(probe))
    return picked if picked.settings.engine == kinds.LLAMACPP else None


def main(argv: list[str] | None = None) -> int:
    """``python -m hunyuan_webui.llama_cpp_setup --needs-llama-cpp [app flags]``: exit 0, printing the
    choice, when :func:`needs_llama_cpp` says the launch wants llama-cpp-python; else 1."""
    from hunyuan_webui import settings as settings_mod

    args = list(sys.argv[1:] if argv is None else argv)
    if "--needs-llama-cpp" not in args:
        print("usage: python -m hunyuan_webui.llama_cpp_setup --needs-llama-cpp [app.py flags]",
              file=sys.stderr)
        return 2
    args.remove("--needs-llama-cpp")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        settings, _ = settings_mod.from_sources(args)
        picked = needs_llama_cpp(settings)
    except Exception as exc:  # the app itself will say what is wrong with its flags
        log.debug("no llama.cpp check: %s", exc)
        return 1
    if picked is None:
        return 1
    print(picked.reason)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

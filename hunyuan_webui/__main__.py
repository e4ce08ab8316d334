"""Command line: ``python -m hunyuan_webui {translate,demo-model,demo-asr,serve}``.

``translate`` streams one translation to the terminal through the same service the web app uses;
``demo-model`` prints the bundled demo checkpoint's directory (building it if needed);
``demo-asr`` the demo speech recogniser's; ``serve`` runs the web app (same flags as ``app.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hunyuan_webui.errors import TranslatorError


def _translate(argv: Sequence[str]) -> int:
    from hunyuan_webui import settings as settings_mod
    from hunyuan_webui.library import Translator

    # One parser for this command's own arguments and every setting, so that a setting's value
    # (``--model PATH``, ``--engine local``) is never taken for text to translate.
    parser = settings_mod.build_parser("python -m hunyuan_webui translate")
    parser.description = ("Translate TEXT (or standard input) and stream the result to the "
                          "terminal.")
    parser.add_argument("--to", dest="target", required=True, help="Target language code.")
    parser.add_argument("--from", dest="source", default="auto",
                        help="Source language code, or auto (default) to detect it.")
    parser.add_argument("--deterministic", action="store_true",
                        help="Greedy decoding instead of the model card's sampling.")
    _mode_arguments(parser)
    parser.add_argument("text", nargs="*", help="Text to translate (default: standard input).")
    own, _ = parser.parse_known_args(argv)
    settings, unknown = settings_mod.from_sources(argv, parser=parser)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    from hunyuan_webui import languages

    languages.normalize(own.target)  # bad codes are reported before any loading
    if own.source.lower() != languages.AUTO:
        languages.normalize(own.source)
    _quiet_transformers()
    from hunyuan_webui.app import check_hardware
    from hunyuan_webui.choice import choose

    asked_for_demo = settings.demo
    choice = choose(settings)
    settings = choice.settings
    if choice.banner and not asked_for_demo:  # chosen for want of a real model: say so
        print(f"[{choice.reason}]", file=sys.stderr)
    check_hardware(settings)
    text = " ".join(own.text) if own.text else sys.stdin.read()
    # The library, as a notebook uses it: load and wait, then stream one job.
    with Translator.from_settings(settings) as translator:
        job = translator.job(text, to=own.target, source=own.source,
                             deterministic=own.deterministic, **_mode_fields(own)).hold()
        for update in job:
            sys.stdout.write(update.delta)
            sys.stdout.flush()
            if update.result is not None and update.result.notice:
                print(f"\n[{update.result.notice}]", file=sys.stderr, end="")
        sys.stdout.write("\n")
    return 0


def _mode_arguments(parser: argparse.ArgumentParser) -> None:
    from hunyuan_webui.modes import MODE_HELP, MODES
    from hunyuan_webui.structured import FORMATS

    group = parser.add_argument_group("translation mode")
    group.add_argument("--mode", choices=MODES, default="translate",
                       help="; ".join(f"{m}: {h}" for m, h in MODE_HELP.items()))
    group.add_argument("--term", action="append", default=[], metavar="SOURCE=TARGET",
                       help="A glossary pair (repeat it for more).")
    group.add_argument("--glossary-file", metavar="CSV", help="Glossary pairs, one per row.")
    group.add_argument("--context", default="", help="context mode: surrounding text or "
                       "background information (not translated).")
    group.add_argument("--style", default="", help="style mode: the style, in free text.")
    group.add_argument("--instruction", action="append", default=[], metavar="TEXT",
                       help="instructions mode: one instruction (repeat it for more).")
    group.add_argument("--data-format", choices=list(FORMATS), default="",
                       help="structured mode: the data's format (default: detected).")


def _mode_fields(own: argparse.Namespace) -> dict[str, object]:
    from pathlib import Path

    from hunyuan_webui.errors import InputError
    from hunyuan_webui.modes import parse_glossary

    rows = []
    for term in own.term:
        if "=" not in term:
            raise InputError(f"--term takes SOURCE=TARGET; got {term!r}.")
        rows.append(term.split("=", 1))
    if own.glossary_file:
        rows += parse_glossary(Path(own.glossary_file).read_text(encoding="utf-8-sig"))
    return {"mode": own.mode, "glossary": parse_glossary(rows), "context": own.context,
            "style": own.style, "instructions": tuple(own.instruction),
            "data_format": own.data_format}


def _quiet_transformers() -> None:
    """A terminal user wants the translation, not loading progress bars and config notes."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _demo_model(argv: Sequence[str]) -> int:
    from hunyuan_webui.demo.formats import DEFAULT_FORMAT, FORMATS
    from hunyuan_webui.demo.model import ensure_demo_model

    parser = argparse.ArgumentParser(prog="python -m hunyuan_webui demo-model",
                                     description="Print a demo checkpoint's directory (building "
                                                 "it first if it is missing).")
    parser.add_argument("--format", choices=list(FORMATS), default=DEFAULT_FORMAT,
                        help="chat format: 7b (<|startoftext|>...<|extra_0|>, the default) or "
                             "1.8b (<｜hy_User｜>...<｜hy_Assistant｜>, the 1.8B models')")
    parser.add_argument("--misbehaving", action="store_true",
                        help="the demo model that answers a few phrases in the wrong language, "
                             "with a loop or with the source again (to show the guards)")
    args = parser.parse_args(argv)
    if args.misbehaving:
        from hunyuan_webui.demo.misbehaving import ensure_misbehaving_model

        print(ensure_misbehaving_model())
        return 0
    print(ensure_demo_model(args.format))
    return 0


def _demo_asr(argv: Sequence[str]) -> int:
    from hunyuan_webui.demo.asr import DEMO_ASR_DIR, build_demo_asr, ensure_demo_asr

    parser = argparse.ArgumentParser(prog="python -m hunyuan_webui demo-asr",
                                     description="Print the demo speech recogniser's directory "
                                                 "(a CTranslate2 Whisper that knows the demo "
                                                 "phrases as espeak-ng speaks them), building it "
                                                 "first if it is missing.")
    parser.add_argument("--rebuild", action="store_true",
                        help="build it again from the phrase table (needs espeak-ng; minutes)")
    args = parser.parse_args(argv)
    print(build_demo_asr(DEMO_ASR_DIR, verbose=True) if args.rebuild else ensure_demo_asr())
    return 0


def _serve(argv: Sequence[str]) -> int:
    from hunyuan_webui.app import main

    return main(argv)


COMMANDS = {"translate": _translate, "demo-model": _demo_model, "demo-asr": _demo_asr,
            "serve": _serve}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print(f"usage: python -m hunyuan_webui {{{','.join(COMMANDS)}}} [options]\n\n"
              "  translate   translate text from the command line\n"
              "  demo-model  print a bundled demo model's directory (--format 1.8b)\n"
              "  demo-asr    print the bundled demo speech recogniser's directory\n"
              "  serve       run the web app (see: serve --help)", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except TranslatorError as exc:
        print(f"error: {exc.user_message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

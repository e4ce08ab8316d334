#!/usr/bin/env python3
"""Compare language detectors on the hand-written samples in tests/data/detect_samples.tsv.

Each detector runs in its own subprocess, so that its load time and peak memory are its own.
For each it measures accuracy over all sentences, accuracy over the hard pairs (zh / zh-Hant / yue,
ar / fa / ur / ug, ms / id, ru / uk / kk / mn, hi / mr), how many of the 38 languages it never gets
right, mean latency per sentence after a warm-up pass, load time and peak resident memory, and
prints a markdown table. Library codes are mapped onto ours with ``languages.normalize`` (so
``fil`` -> ``tl``, ``iw`` -> ``he``, ``zh-tw`` -> ``zh-Hant``); a code outside our 38 counts as a miss.

Only detectors that ship their model inside the package are compared (no download at run time).
Those not installed are skipped with a note.

    .venv/bin/python scripts/compare_detectors.py            # the table
    .venv/bin/python scripts/compare_detectors.py --misses   # and every wrong answer
    .venv/bin/python scripts/compare_detectors.py --only ours lingua-high
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hunyuan_webui.errors import UnknownLanguageError  # noqa: E402
from hunyuan_webui.languages import CODES, normalize  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "detect_samples.tsv"
HARD = frozenset({"zh", "zh-Hant", "yue", "ar", "fa", "ur", "ug", "ms", "id",
                  "ru", "uk", "kk", "mn", "hi", "mr"})
PASSES = 3  # timed passes over the whole set, after one warm-up pass

Detect = Callable[[str], "str | None"]


def load_samples(path: Path = SAMPLES) -> list[tuple[str, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            code, sentence = line.split("\t", 1)
            rows.append((code, sentence))
    return rows


def ours(code: str | None) -> str | None:
    """A library's code as one of our 38, or None."""
    if not code:
        return None
    try:
        return normalize(code)
    except UnknownLanguageError:
        return None


# --- the detectors ---------------------------------------------------------------------------


def make_ours() -> Detect:
    from hunyuan_webui.detect import LanguageDetector

    detector = LanguageDetector().warm_up()
    return lambda text: detector.detect(text).code


def make_ours_with_lingua(high: bool) -> Detect:
    """Our pipeline with lingua instead of py3langid for the shared scripts (the road not taken)."""
    from lingua import Language, LanguageDetectorBuilder

    from hunyuan_webui.detect import LanguageDetector, langid_codes

    known = {lang.iso_code_639_1.name.lower(): lang for lang in Language.all()}
    builder = LanguageDetectorBuilder.from_languages(*(known[c] for c in langid_codes()))
    builder = builder.with_preloaded_language_models()
    if not high:
        builder = builder.with_low_accuracy_mode()
    lingua = builder.build()

    class WithLingua(LanguageDetector):
        def _langid_rank(self, text, group):
            values = {r.language.iso_code_639_1.name.lower(): r.value
                      for r in lingua.compute_language_confidence_values(text)}
            values = {c: values.get(c, 0.0) for c in group}
            norm = sum(values.values()) or 1.0
            return sorted(((c, v / norm) for c, v in values.items()),
                          key=lambda item: item[1], reverse=True)

    detector = WithLingua().warm_up()
    return lambda text: detector.detect(text).code


def make_lingua(high: bool) -> Detect:
    from lingua import Language, LanguageDetectorBuilder

    known = {lang.iso_code_639_1.name.lower(): lang for lang in Language.all()}
    languages = [known[c] for c in CODES if c in known]
    builder = LanguageDetectorBuilder.from_languages(*languages).with_preloaded_language_models()
    if not high:
        builder = builder.with_low_accuracy_mode()
    detector = builder.build()

    def detect(text: str) -> str | None:
        lang = detector.detect_language_of(text)
        return ours(lang.iso_code_639_1.name.lower()) if lang else None

    return detect


def make_py3langid() -> Detect:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([c for c in identifier.labels if ours(c)])
    return lambda text: ours(identifier.classify(text)[0])


def make_pycld2() -> Detect:
    import pycld2

    def detect(text: str) -> str | None:
        try:
            _, _, details = pycld2.detect(text, bestEffort=True)
        except pycld2.error:
            return None
        return ours(details[0][1]) if details[0][1] != "un" else None

    return detect


def make_cld3() -> Detect:
    import gcld3

    identifier = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=1000)
    return lambda text: ours(identifier.FindLanguage(text=text).language)


def make_langdetect() -> Detect:
    from langdetect import DetectorFactory, LangDetectException
    from langdetect import detect as langdetect_detect

    DetectorFactory.seed = 0

    def detect(text: str) -> str | None:
        try:
            return ours(langdetect_detect(text))
        except LangDetectException:
            return None

    return detect


# name -> (PyPI distribution whose version is shown, factory, note)
DETECTORS: dict[str, tuple[str, Callable[[], Detect], str]] = {
    "ours": ("py3langid", make_ours,
             "hunyuan_webui.detect: script rules + canto-filter + hanzidentifier + py3langid"),
    "ours+lingua-high": ("lingua-language-detector", lambda: make_ours_with_lingua(True),
                         "the same pipeline with lingua high accuracy instead of py3langid"),
    "ours+lingua-low": ("lingua-language-detector", lambda: make_ours_with_lingua(False),
                        "the same pipeline with lingua low accuracy instead of py3langid"),
    "lingua-high": ("lingua-language-detector", lambda: make_lingua(True),
                    "34 of our languages, high accuracy"),
    "lingua-low": ("lingua-language-detector", lambda: make_lingua(False),
                   "34 of our languages, low accuracy"),
    "py3langid": ("py3langid", make_py3langid, "restricted to our languages"),
    "pycld2": ("pycld2", make_pycld2, "CLD2, best effort"),
    "cld3": ("cld3-py", make_cld3, "CLD3 (gcld3 module)"),
    "langdetect": ("langdetect", make_langdetect, "seed 0"),
}


def run_one(name: str) -> dict:
    """Measure one detector in this process."""
    dist, factory, note = DETECTORS[name]
    samples = load_samples()
    start = time.perf_counter()
    detect = factory()
    detect(samples[0][1])
    load_s = time.perf_counter() - start
    answers = [detect(sentence) for _, sentence in samples]  # also the warm-up pass
    start = time.perf_counter()
    for _ in range(PASSES):
        for _, sentence in samples:
            detect(sentence)
    latency_ms = (time.perf_counter() - start) / (PASSES * len(samples)) * 1000
    right = [code == answer for (code, _), answer in zip(samples, answers)]
    hard = [r for (code, _), r in zip(samples, right) if code in HARD]
    never = sorted(c for c in CODES
                   if not any(r for (code, _), r in zip(samples, right) if code == c))
    return {
        "name": name, "dist": dist, "version": version(dist), "note": note,
        "n": len(samples), "accuracy": sum(right) / len(right),
        "hard_n": len(hard), "hard_accuracy": sum(hard) / len(hard),
        "never": never, "latency_ms": latency_ms, "load_s": load_s,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "misses": [(code, answer, sentence) for (code, sentence), answer, r
                   in zip(samples, answers, right) if not r],
    }


def measure(name: str) -> dict | str:
    """Run one detector in a fresh interpreter; a string says why it could not run."""
    dist = DETECTORS[name][0]
    try:
        version(dist)
    except PackageNotFoundError:
        return f"{dist} is not installed"
    proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True,
                          text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=False)
    if proc.returncode:
        return f"failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'}"
    return json.loads(proc.stdout)


def table(results: list[dict]) -> str:
    lines = [
        "| detector | package version | accuracy (all) | accuracy (hard pairs) | languages never "
        "right | mean latency / sentence | load | peak RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        never = f"{len(r['never'])}" + (f" ({', '.join(r['never'])})" if r["never"] else "")
        lines.append(
            f"| {r['name']} ({r['note']}) | {r['dist']} {r['version']} "
            f"| {r['accuracy']:.1%} ({round(r['accuracy'] * r['n'])}/{r['n']}) "
            f"| {r['hard_accuracy']:.1%} ({round(r['hard_accuracy'] * r['hard_n'])}/{r['hard_n']}) "
            f"| {never} | {r['latency_ms']:.3f} ms | {r['load_s']:.2f} s | {r['rss_mb']:.0f} MB |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(DETECTORS), help="detectors to run")
    parser.add_argument("--misses", action="store_true", help="list every wrong answer")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(args.child)))
        return 0

    samples = load_samples()
    print(f"{len(samples)} sentences in {len({c for c, _ in samples})} languages, "
          f"{sum(c in HARD for c, _ in samples)} of them in the hard pairs; "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs.\n")
    results, skipped = [], []
    for name in args.only or DETECTORS:
        outcome = measure(name)
        if isinstance(outcome, str):
            skipped.append(f"{name}: {outcome}")
        else:
            results.append(outcome)
    print(table(results))
    for line in skipped:
        print(f"\nskipped {line}")
    if args.misses:
        for r in results:
            print(f"\n{r['name']} misses:")
            for code, answer, sentence in r["misses"]:
                print(f"  {code} -> {answer}: {sentence}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

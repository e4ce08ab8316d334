"""What runs in the visitor's browser: the page's theme, CSS and small scripts.

Scripts are inline (the Content-Security-Policy allows inline scripts, nothing from elsewhere):
the Ctrl/Cmd+Enter shortcut, the start-up choice of the language pair (a shared link's
``?sl=&tl=&text=``, else the browser's language as the target), the character counter and the
share link. The theme keeps Gradio's Soft look with system fonts (a browser falls back to the
fonts below for Tibetan, Uyghur, Mongolian and CJK, and last to the copies the server lends,
:mod:`~hunyuan_webui.web.fonts`) and colours that pass WCAG AA contrast in light and dark mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from hunyuan_webui import languages
from hunyuan_webui.web.fonts import FAMILIES
from hunyuan_webui.web.page.text import LABELS, picker_search

SHARE_TEXT_MAX = 500  # longer texts are left out of a shared link (URLs stay readable)

# The Latin fonts, then the fonts every language's row names for its script (Language.fonts), in
# the order a browser should try them. Debian's fonts-noto-core / fonts-noto-cjk provide the Noto
# ones; Windows and macOS their own.
LATIN_FONTS = ("system-ui", "-apple-system", "Segoe UI", "Roboto", "Noto Sans", "Helvetica Neue",
               "Arial")
GENERIC = frozenset({"system-ui", "-apple-system", "sans-serif"})


def font_stack() -> str:
    """The page's font stack: the Latin fonts, the rows' fonts, the server's own copies
    (``FAMILIES``, when it has them: fonts.py), and the generic family."""
    names = [*LATIN_FONTS, *languages.table().fonts]
    quoted = [n if n in GENERIC or " " not in n else f'"{n}"' for n in names]
    return ", ".join([*quoted, *FAMILIES, "sans-serif"])


FONT_STACK = font_stack()

THEME = gr.themes.Soft(font=[FONT_STACK], font_mono=["ui-monospace", "monospace"]).set(
    # The Soft theme's label chips (#6366f1 on #e0e7ff, 3.6:1) and primary button fail WCAG AA.
    block_label_text_color="*primary_800", block_label_text_color_dark="*primary_100",
    block_label_background_fill="*primary_100", block_label_background_fill_dark="*primary_800",
    block_title_text_color="*primary_800", block_title_text_color_dark="*primary_100",
    block_title_background_fill="*primary_100", block_title_background_fill_dark="*primary_800",
    button_primary_background_fill="*primary_700", button_primary_background_fill_dark="*primary_600",
    button_primary_background_fill_hover="*primary_800",
    button_primary_background_fill_hover_dark="*primary_700",
    button_primary_text_color="white", button_primary_text_color_dark="white",
    button_cancel_background_fill="#b91c1c", button_cancel_background_fill_dark="#b91c1c",
    button_cancel_text_color="white", button_cancel_text_color_dark="white",
    body_text_color_subdued="*neutral_600", body_text_color_subdued_dark="*neutral_300",
    checkbox_label_text_color="*neutral_800", checkbox_label_text_color_dark="*neutral_100",
    checkbox_label_background_fill_selected="*primary_700",
    checkbox_label_background_fill_selected_dark="*primary_600",
    checkbox_label_text_color_selected="white", checkbox_label_text_color_selected_dark="white",
)

CSS = """
#output-box textarea { font-size: 1.05rem; }
#status-line { font-size: 0.85rem; }
#char-count { text-align: right; font-size: 0.8rem; margin-top: -0.5rem; }
#char-count.over { color: #b45309; font-weight: 600; }
#lang-row { flex-wrap: nowrap !important; align-items: end; }
#lang-row > * { min-width: 0 !important; }
#swap-btn { flex: 0 0 auto !important; min-width: 2.75rem !important; width: 2.75rem;
            padding: 0 !important; align-self: end; height: 2.6rem; }
/* Right-to-left output: only the text runs right to left (the textarea has its own dir). The
   whole block used to, and its label slid under the Copy button in the top right corner. */
#output-box[dir=rtl] { direction: ltr; }
#output-box .icon-button-wrapper { z-index: 2; }
#romanized { font-size: 0.95rem; }
/* The header's link (Start a class): Gradio's link colour on the header's grey failed axe's
   contrast check (4.5:1); these are 6.7:1 on white and 9:1 on the dark theme's background. */
#app-header a { color: #1d4ed8; text-decoration: underline; }
.dark #app-header a { color: #93c5fd; }
@media (max-width: 640px) {
  #app-header p { display: none; }
  #app-header h1 { font-size: 1.25rem; margin: 0; }
  #output-box textarea { min-height: 7rem; }
  /* Four buttons in 326 px: "Retranslate" overflowed its button at the desktop size. */
  #action-row { gap: 0.35rem !important; }
  #action-row button { min-width: 0 !important; font-size: 0.9rem !important;
                       padding-inline: 0.4rem !important; flex: 1 0 auto !important; }
  #action-row #translate-btn { flex-grow: 2 !important; }
  /* The pickers one above the other, the width of the screen, Swap between them: side by
     side, each had 70 px and cut "Detect language" to "Detect la". */
  #lang-row { display: grid !important; grid-template-columns: minmax(0, 1fr);
              gap: 0.25rem !important; }
  #swap-btn { justify-self: center; align-self: center !important; height: 2.25rem;
              transform: rotate(90deg); }
  /* The first screen holds Translate and the first line of the output: the pickers'
     labels are for screen readers only, the gaps are halved, the text box is shorter. */
  #lang-row [data-testid=block-info] { position: absolute !important; width: 1px; height: 1px;
                                       overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  #input-box textarea { height: 5.5rem !important; min-height: 5.5rem; }
  .column, .row { gap: 0.5rem !important; }
  #demo-banner .label-wrap { font-size: 0.9rem; }
  .gradio-container { padding-top: 0.25rem !important; }
}
/* Sentence highlight and the readings (web/page/aligned.py, scripts/22-highlight.js):
   a block takes no room while it has nothing to show, or what it has is for another text. */
#source-romanized:not(:has(.hymt-reading:not([hidden]))),
#romanized:not(:has(.hymt-reading:not([hidden]))),
#sentence-view:not(:has(.hymt-sentences:not([hidden]))) { display: none !important; }
.hymt-reading[hidden], .hymt-sentences[hidden] { display: none !important; }
.hymt-reading { font-size: 0.95rem; font-style: italic; overflow-wrap: anywhere; }
#source-romanized { margin-top: -0.25rem; }
.hymt-sentences { border: 1px solid var(--border-color-primary); border-radius: var(--radius-lg);
                  padding: 0.5rem 0.75rem; }
.hymt-sentences-title { font-size: 0.85rem; margin: 0 0 0.35rem !important; }
.hymt-pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
.hymt-side { white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.7; }
.hymt-seg { cursor: pointer; border-radius: 0.2rem; }
.hymt-seg.marked { background: #fde68a; color: #1f2937; }
.dark .hymt-seg.marked { background: #854d0e; color: #ffffff; }
@media (max-width: 640px) {
  .hymt-pair { grid-template-columns: minmax(0, 1fr); gap: 0.5rem; }
}
/* Listen (scripts/20-listen.js): a speaker button in each box's bottom right corner, 44 px (a
   finger's size on a phone), the text kept clear of it. */
#input-box, #output-box { position: relative; }
#input-box textarea, #output-box textarea { padding-right: 3.25rem; }
.hymt-listen { position: absolute; right: 0.6rem; bottom: 0.6rem; z-index: 3; width: 2.75rem;
               height: 2.75rem; display: flex; align-items: center; justify-content: center;
               border-radius: 999px; border: 1px solid #94a3b8; background: #ffffff;
               color: #1e3a8a; cursor: pointer; padding: 0; }
.hymt-listen:hover { background: #e0e7ff; }
.hymt-listen:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
.hymt-listen[hidden] { display: none !important; }
.hymt-listen svg { width: 1.4rem; height: 1.4rem; }
.dark .hymt-listen { background: #1f2937; color: #bfdbfe; border-color: #64748b; }
.dark .hymt-listen:hover { background: #374151; }
/* Dictate (scripts/23-dictate.js): a microphone left of Listen, the same size; its note under
   the box says why the microphone cannot be had, when it cannot. */
#input-box textarea { padding-right: 6.25rem; }
.hymt-dictate { position: absolute; right: 3.6rem; bottom: 0.6rem; z-index: 3; width: 2.75rem;
                height: 2.75rem; border-radius: 999px; border: 1px solid #94a3b8;
                background: #ffffff; cursor: pointer; padding: 0; font-size: 1.2rem; }
.hymt-dictate.on { background: #b91c1c; color: #ffffff; border-color: #b91c1c; }
.hymt-dictate:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
.dark .hymt-dictate { background: #1f2937; border-color: #64748b; }
.hymt-dictate-note { font-size: 0.85rem; color: #92400e; }
.dark .hymt-dictate-note { color: #fcd34d; }
.hymt-dictate-note[hidden] { display: none; }
/* The phrasebook: Save by the output, and the phrasebook's buttons, are touch
   targets of at least 44 px on phones. */
#star-btn { min-width: 2.75rem; }
@media (max-width: 640px) {
  #star-btn, #phrasebook-remove, #phrasebook-export { min-height: 44px !important; }
}
/* Touch targets and the selected tab. The selected tab's accent (#6366f1) was
   4.46:1 on white (axe: serious); these are 7:1 and more, light and dark. On a phone every control
   is at least 44x44 CSS px (32 of 34 were smaller): tabs, accordions, pickers, buttons, check
   boxes and radios (their labels take the tap), sliders and example chips (the footer's links:
   scripts/10-names.js, as Gradio scopes this CSS to its app's container). */
.tab-container button.selected { color: var(--primary-700) !important; }
.dark .tab-container button.selected { color: var(--primary-300) !important; }
#advanced-info { font-size: 0.9rem; }
@media (max-width: 640px) {
  .tab-container { height: auto !important; }
  .tab-container button, .tab-container.wrap button { height: 44px !important; }
  button, [role=button], [role=tab], a[href], .label-wrap, select,
  input:not([type=checkbox]):not([type=radio]):not([type=file]) { min-height: 44px !important; }
  button, [role=button], [role=tab], a[href], input[type=number] { min-width: 44px !important; }
  label:has(> input[type=checkbox]), label:has(> input[type=radio]) {
    min-height: 44px !important; min-width: 44px !important; align-items: center; }
  input[role=combobox] { min-height: 44px !important; }
  .label-wrap { text-align: start; }
  .tab-like-container { height: 44px !important; }  /* a slider's number and its reset button */
  [role=gridcell], [role=columnheader] { min-height: 44px !important; height: 44px; }
  /* The first screen keeps Translate and the output's first line with these taller controls:
     the banner and the pickers lose their blocks' padding, Swap its margins. */
  #demo-banner { padding-block: 0 !important; }
  #demo-banner .label-wrap { margin-bottom: 0; }
  #source-lang, #target-lang { padding-block: 0 !important; }
  #lang-row { gap: 0 !important; }
}
"""

# The page's scripts, one file per subject (scripts/*.js), put into its <head> in name order.
SCRIPTS = Path(__file__).resolve().parent / "scripts"

# Codes the page offers, and the other spellings browsers send for them (navigator.language):
# the rows' aliases (a tag's primary subtag is tried last, by the script itself).
_CODES = [lang.code for lang in languages.LANGUAGES]
_BROWSER_ALIASES = dict(languages.table().aliases)

# Listen's words (scripts/20-listen.js makes its buttons itself), in both UI languages.
_LISTEN_WORDS = {lang: {key: LABELS[lang][key] for key in ("listen_source", "listen_target",
                                                             "listen_stop")} for lang in LABELS}

HEAD = "\n".join(
    "<script>\n" + path.read_text(encoding="utf-8") + "</script>"
    for path in sorted(SCRIPTS.glob("*.js"))
).replace("__CODES__", json.dumps(_CODES)).replace("__ALIASES__", json.dumps(_BROWSER_ALIASES)
            ).replace("__NAMES__", json.dumps(picker_search(), ensure_ascii=False))
HEAD = HEAD.replace("__LISTEN_WORDS__", json.dumps(_LISTEN_WORDS, ensure_ascii=False))

# On page load: a shared link's pair and text, else the browser's language as the target.
START_JS = """(source, target, text) => {
  const p = new URLSearchParams(window.location.search);
  const h = window.hymt;
  const sl = p.get('sl') === 'auto' ? 'auto' : (h.code(p.get('sl')) || source);
  let tl = h.code(p.get('tl'));
  if (!tl) {
    const mine = h.code(navigator.language) || 'en';
    tl = mine === sl ? (mine === 'en' ? 'zh' : 'en') : mine;
  }
  const shared = p.get('text');
  if (shared && shared.trim() && [...shared].length <= __MAX__) h.translateWhenReady(shared);
  return [sl, tl, shared === null ? text : shared];
}""".replace("__MAX__", str(SHARE_TEXT_MAX))

SHARE_JS = """(source, target, text) => {
  const url = new URL(window.location.href);
  const lan = __LAN__;  // the server's network address, when it listens on the network
  if (lan && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) url.hostname = lan;
  url.search = '';
  url.searchParams.set('sl', source);
  url.searchParams.set('tl', target);
  if (text && [...text].length <= __MAX__) url.searchParams.set('text', text);
  const link = url.toString();
  try { window.history.replaceState(null, '', link); } catch (e) {}
  try { navigator.clipboard && navigator.clipboard.writeText(link).catch(() => {}); } catch (e) {}
  return link;
}""".replace("__MAX__", str(SHARE_TEXT_MAX))


def share_js(lan: str | None) -> str:
    """The Share button's script. ``lan``: the server's LAN address, which replaces a loopback
    one (the launcher's first line is 127.0.0.1, a dead link on every student's phone)."""
    return SHARE_JS.replace("__LAN__", json.dumps(lan))


def count_js(limit: int, parts: int) -> str:
    return f"(text) => window.hymt.count(text, {limit}, {parts})"


def count_text(chars: int, limit: int) -> str:
    """The counter's first rendering, in the same format the script writes."""
    return f"{chars:,} / {limit:,}"

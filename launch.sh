#!/usr/bin/env bash
# One-click launcher for the Hunyuan-MT web translator.
#
#   bash launch.sh [app flags]        set up .venv if needed, then run the app (--demo: tiny model)
#   bash launch.sh --background ...   same, in the background: returns once ready, logs to .hymt/
#   bash launch.sh --class [--demo]   open a class: prints the teacher's link and the students' code
#   bash launch.sh stop               stop the background server (and any engine server it started)
#   bash launch.sh test [pytest args] set up (with test tools and redis-server/chromium), then run
#                                     the whole test suite (-m "not slow": the fast lane, no model)
#   bash launch.sh --help             this, and the app's flags (installs nothing)
#
# Environment: PYTHON (interpreter, default python3), HYMT_VENV (default .venv),
# HYMT_TORCH_INDEX (a pip index URL for torch, e.g. https://download.pytorch.org/whl/cu128).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

VENV="${HYMT_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="2.13.0"
STATE_DIR=".hymt"
PID_FILE="$STATE_DIR/server.pid"
LOG_FILE="$STATE_DIR/server.log"

say() { printf '[launch] %s\n' "$*" >&2; }
die() { printf '[launch] error: %s\n' "$*" >&2; exit 1; }

check_python() {
  command -v "$PYTHON" >/dev/null 2>&1 || die "no Python found ('$PYTHON'). Install Python 3.11+ (e.g. 'sudo apt install python3 python3-venv') or set PYTHON=/path/to/python3."
  "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "$("$PYTHON" --version 2>&1) is too old: Python 3.11 or newer is needed (set PYTHON=...)."
}

install_torch() {
  if "$VENV/bin/python" -c 'import torch' >/dev/null 2>&1; then return; fi
  if [ -n "${HYMT_TORCH_INDEX:-}" ]; then
    say "installing torch $TORCH_VERSION from $HYMT_TORCH_INDEX"
    "$VENV/bin/pip" install -q "torch==$TORCH_VERSION" --index-url "$HYMT_TORCH_INDEX"
  elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    say "NVIDIA GPU found ($(nvidia-smi -L | head -n1)): installing the CUDA build of torch $TORCH_VERSION"
    "$VENV/bin/pip" install -q "torch==$TORCH_VERSION"
  elif [ "$(uname -s)" = "Darwin" ]; then
    say "macOS: installing torch $TORCH_VERSION (Apple GPUs through MPS)"
    "$VENV/bin/pip" install -q "torch==$TORCH_VERSION"
  else
    say "no NVIDIA GPU found: installing the CPU build of torch $TORCH_VERSION"
    # A local CPU wheel (pip's find-links) if there is one, its dependencies from the index; else
    # PyTorch's CPU index. Never the multi-GB CUDA build that plain PyPI serves on Linux.
    if "$VENV/bin/pip" install -q --no-index --no-deps "torch==$TORCH_VERSION" >/dev/null 2>&1; then
      "$VENV/bin/pip" install -q "torch==$TORCH_VERSION"
    else
      "$VENV/bin/pip" install -q "torch==$TORCH_VERSION" \
        --index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple
    fi
  fi
}

setup() {  # $1: "dev" to add the test tools
  check_python
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating the virtualenv $VENV"
    "$PYTHON" -m venv "$VENV" || die "could not create $VENV: install the venv module (e.g. 'sudo apt install python3-venv')."
  fi
  install_torch
  local files=(requirements.txt)
  [ "${1:-}" = "dev" ] && files+=(requirements-dev.txt)
  local stamp="$VENV/.hymt-${1:-run}.stamp" digest
  digest="$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    say "installing ${files[*]}"
    if [ "${1:-}" = "dev" ] && ! "$VENV/bin/python" -c 'import llama_cpp' >/dev/null 2>&1; then
      say "(llama-cpp-python compiles llama.cpp for the GGUF tests: several minutes, once)"
    fi
    local args=()
    for f in "${files[@]}"; do args+=(-r "$f"); done
    # A llama-cpp-python wheel built before (install_llama_cpp) is not compiled again.
    [ -d "$STATE_DIR/wheels" ] && args+=(--find-links "$STATE_DIR/wheels")
    # llama.cpp's text models are all the app runs: its multimodal library is not built.
    CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$VENV/bin/pip" install -q "${args[@]}"
    echo "$digest" > "$stamp"
  fi
}

# Without a GPU the launch runs Hy-MT2-1.8B's GGUF through llama.cpp (hunyuan_webui/choice.py),
# which needs llama-cpp-python: a source package that compiles llama.cpp. It is installed here
# only when the launch would choose that path (HYMT_LLAMA_CPP=0: never). The wheel it builds is
# kept in $STATE_DIR/wheels, so a new virtualenv installs it in seconds instead of compiling again.
install_llama_cpp() {  # "$@": the app's flags
  [ "${HYMT_LLAMA_CPP:-1}" = 0 ] && return 0
  "$VENV/bin/python" -c 'import llama_cpp' >/dev/null 2>&1 && return 0
  local why
  why="$("$VENV/bin/python" -m hunyuan_webui.llama_cpp_setup --needs-llama-cpp "$@" 2>/dev/null)" || return 0
  local pin wheels="$STATE_DIR/wheels"
  pin="$(grep -E '^llama-cpp-python==' requirements-dev.txt | cut -d' ' -f1)"
  pin="${pin:-llama-cpp-python}"
  mkdir -p "$wheels"
  say "no GPU: the launch runs $why"
  if ! ls "$wheels"/llama_cpp_python-"${pin#*==}"-*.whl >/dev/null 2>&1; then
    say "installing $pin for it: a one-time build of llama.cpp, about 5-15 minutes on a laptop"
    say "(the wheel is kept in $wheels: later virtualenvs install it in seconds)"
    # llama.cpp's text models are all the app runs: its multimodal library is not built.
    if ! CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" "$VENV/bin/pip" wheel -q --no-deps \
        -w "$wheels" "$pin"; then
      say "building $pin failed: starting without llama.cpp (the page says what runs instead)"
      return 0
    fi
  fi
  "$VENV/bin/pip" install -q --find-links "$wheels" "$pin" \
    || say "installing $pin failed: starting without llama.cpp (the page says what runs instead)"
}

# The test suite runs against real services: Debian's redis-server, chromium and Noto fonts. As root with
# apt-get (CI, containers) they are installed; elsewhere the command to run is printed.
test_prerequisites() {
  # axe-core (the accessibility test) from npm, pinned in package-lock.json, into node_modules/.
  if [ ! -f node_modules/axe-core/axe.min.js ]; then
    command -v npm >/dev/null 2>&1 || die "the tests need npm (for axe-core): e.g. 'sudo apt-get install npm'."
    say "installing axe-core for the tests (npm ci)"
    npm ci --silent --no-audit --no-fund
  fi
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  # The demo phrases spoken for the speech tests (and to rebuild the demo recogniser).
  command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
  # The fonts the page lends to browsers without them (tests/browser/test_fonts.py).
  [ -f /usr/share/fonts/truetype/noto/NotoSerifTibetan-Regular.ttf ] || missing+=(fonts-noto-core)
  [ "${#missing[@]}" -eq 0 ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]} for the tests (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    die "the tests need ${missing[*]}: install them first, e.g. 'sudo apt-get install ${missing[*]}' (a skipped test is a failed test here)."
  fi
}

stop_server() {
  if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    kill "$(cat "$PID_FILE")" && say "stopped the server (pid $(cat "$PID_FILE"))"
    rm -f "$PID_FILE"
  else
    rm -f "$PID_FILE"
    say "no background server is running"
  fi
}

start_background() {
  mkdir -p "$STATE_DIR"
  if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    # Re-running a notebook's launch cell is normal: say where the running server is.
    say "a server is already running (pid $(cat "$PID_FILE")); 'bash launch.sh stop' to restart it."
    grep 'translator ready:' "$LOG_FILE" 2>/dev/null | tail -n1 || true
    return 0
  fi
  # The log is kept across starts (the last run's error stays readable); this start's lines
  # are those after the marker.
  local first
  printf '\n=== %s: bash launch.sh --background %s\n' "$(date '+%F %T')" "$*" >>"$LOG_FILE"
  first=$(wc -l <"$LOG_FILE")
  nohup "$VENV/bin/python" app.py "$@" >>"$LOG_FILE" 2>&1 &
  echo $! > "$PID_FILE"
  say "starting in the background (pid $!, log $LOG_FILE)"
  local waited=0
  while [ "$waited" -lt "${HYMT_START_TIMEOUT:-900}" ]; do
    if tail -n +"$first" "$LOG_FILE" | grep -q 'translator ready:'; then
      tail -n +"$first" "$LOG_FILE" | grep -E 'translator ready:|translator: |students on|LAN|Class open' || true
      return 0
    fi
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n +"$first" "$LOG_FILE" | tail -n 20 >&2
      die "the server exited before it was ready (see $LOG_FILE)."
    fi
    sleep 1; waited=$((waited + 1))
  done
  die "not ready after ${waited}s; still loading? See $LOG_FILE (stop with 'bash launch.sh stop')."
}

case "${1:-}" in
  test)
    shift
    setup dev
    test_prerequisites
    exec "$VENV/bin/python" -m pytest "$@"
    ;;
  stop)
    stop_server
    ;;
  -h|--help|help)
    # At once, in a fresh clone: the header above (up to its first line of code), then the
    # app's flags as docs/flags.txt keeps them (generated from the settings; a test keeps it true).
    sed -n '2,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
    echo
    if [ -f docs/flags.txt ]; then cat docs/flags.txt
    else setup && exec "$VENV/bin/python" app.py --help; fi
    ;;
  *)
    setup
    background=0; args=()
    for a in "$@"; do
      if [ "$a" = "--background" ]; then background=1; else args+=("$a"); fi
    done
    install_llama_cpp "${args[@]+"${args[@]}"}"
    if [ "$background" = 1 ]; then
      start_background "${args[@]+"${args[@]}"}"
    else
      exec "$VENV/bin/python" app.py "${args[@]+"${args[@]}"}"
    fi
    ;;
esac

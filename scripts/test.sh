#!/usr/bin/env bash
# The test suite from a fresh clone on Debian or Ubuntu, with nothing else done first:
#   1. what the tests need from the system, installed when missing (with apt-get as root, else through
#      sudo; with neither, the script stops and prints the command to run):
#        haproxy      the load-balancing test runs deploy/haproxy.cfg with it
#        postgresql   the lake tests start throwaway clusters with its initdb and pg_ctl (the package
#                     is installed without creating or starting its own "main" cluster)
#        chromium     the browser tests drive it, with a font that has CJK glyphs (fonts-droid-fallback)
#        python3-venv when the Python that makes the environment is Debian's and lacks venv/ensurepip
#                     (python3 too when there is none)
#   2. a virtual environment with the project installed editable with its test extra (installed again
#      only when pyproject.toml changed since);
#   3. the suite: python -m pytest -n auto --dist worksteal -q -p no:cacheprovider ARGS...
# What is already there is not installed again, so on a prepared machine the set-up takes a second.
# A missing program fails the tests that need it, naming this script; nothing skips silently.
#
# Usage: scripts/test.sh [ARGS...]    set up, then run pytest with ARGS added (e.g. tests/ui -x)
#        scripts/test.sh --setup      set up only (steps 1 and 2)
#        scripts/test.sh --check      install nothing: say what the system lacks, exit 1 if anything
#
# Environment:
#   RAGFAULT_VENV           the virtual environment (default: .venv in the checkout)
#   RAGFAULT_PYTHON         the interpreter that creates it (default: python3)
#   RAGFAULT_CHROMIUM       the chromium binary the browser tests drive (default: chromium on PATH)
#   RAGFAULT_TESTS_WITHOUT  the opt-out: what this machine goes without, separated by spaces or commas,
#                           from haproxy, postgresql, chromium, or "all". Those are neither checked nor
#                           installed, and the tests that need them skip (saying so) instead of failing.
#   RAGFAULT_SETUP_SEARCH   directories searched besides PATH for haproxy, initdb and pg_ctl (default:
#                           /usr/sbin /usr/local/sbin /usr/lib/postgresql/*/bin, where Debian puts them)
# Exit status: pytest's; 1 when the set-up cannot be done (what is missing is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
me=scripts/test.sh

mode=run
case "${1:-}" in
  --check) mode=check; shift ;;
  --setup) mode=setup; shift ;;
esac

say() { echo "$me: $*" >&2; }

without=" ${RAGFAULT_TESTS_WITHOUT:-} "
without=${without//,/ }
for name in $without; do
  case $name in
    haproxy | postgresql | chromium | all) ;;
    *) say "RAGFAULT_TESTS_WITHOUT names '$name': the names are haproxy, postgresql, chromium, all"; exit 1 ;;
  esac
done
going_without() { [[ $without == *" $1 "* || $without == *" all "* ]]; }

search_dirs=${RAGFAULT_SETUP_SEARCH-/usr/sbin /usr/local/sbin /usr/lib/postgresql/*/bin}

# the path of program $1, on PATH or in the search directories (the newest PostgreSQL's last)
find_program() {
  local dir found=""
  if command -v "$1" >/dev/null 2>&1; then
    command -v "$1"
    return 0
  fi
  for dir in $search_dirs; do
    [ -x "$dir/$1" ] && found="$dir/$1"
  done
  [ -n "$found" ] && echo "$found"
}

venv=${RAGFAULT_VENV:-.venv}
python=${RAGFAULT_PYTHON:-python3}

# missing: one line a lack ("name|what|packages"); fatal: lacks no package can fix
missing=()
fatal=()
lack() { missing+=("$1|$2|$3"); }

check() {
  missing=()
  fatal=()
  if ! going_without haproxy && [ -z "$(find_program haproxy)" ]; then
    lack haproxy "haproxy (the load-balancing test runs deploy/haproxy.cfg with it)" haproxy
  fi
  if ! going_without postgresql && { [ -z "$(find_program initdb)" ] || [ -z "$(find_program pg_ctl)" ]; }; then
    lack postgresql "PostgreSQL's initdb and pg_ctl (the lake tests start throwaway clusters)" postgresql
  fi
  if ! going_without chromium; then
    local chromium=${RAGFAULT_CHROMIUM:-$(command -v chromium || true)}
    if [ -n "${RAGFAULT_CHROMIUM:-}" ] && ! "$chromium" --version >/dev/null 2>&1; then
      fatal+=("RAGFAULT_CHROMIUM=$chromium does not run ('$chromium --version' fails): point it at a chromium binary")
    elif [ -z "$chromium" ] || ! "$chromium" --version >/dev/null 2>&1; then
      lack chromium "chromium (the browser tests drive it)" chromium
    fi
    if ! command -v fc-list >/dev/null 2>&1; then
      lack chromium "a font with CJK glyphs, and fontconfig's fc-list to find it (a browser test draws Chinese text)" "fontconfig fonts-droid-fallback"
    elif [ -z "$(fc-list :lang=zh 2>/dev/null)" ]; then
      lack chromium "a font with CJK glyphs (a browser test draws Chinese text)" fonts-droid-fallback
    fi
  fi
  if [ ! -x "$venv/bin/python" ]; then
    check_python
  fi
}

# the interpreter that will create the environment: new enough, with venv and ensurepip
check_python() {
  local minimum
  minimum=$(sed -n 's/^requires-python *= *">= *\([0-9.]*\)".*/\1/p' pyproject.toml)
  if ! command -v "$python" >/dev/null 2>&1; then
    if [ "$python" = python3 ]; then
      lack python "Python 3 with its venv module, to create $venv" "python3 python3-venv"
    else
      fatal+=("no '$python' to create $venv with: set RAGFAULT_PYTHON to a Python ${minimum:-3} or newer")
    fi
  elif ! "$python" -c "import sys; sys.exit(sys.version_info[:2] < tuple(map(int, '${minimum:-3}'.split('.'))))"; then
    fatal+=("$("$python" -V 2>&1) ($python) is older than the $minimum the project needs: set RAGFAULT_PYTHON to a newer one")
  elif ! "$python" -c "import ensurepip, venv" >/dev/null 2>&1; then
    if [[ $(readlink -f "$(command -v "$python")") == /usr/bin/python3* ]]; then
      lack python "Python's venv module, to create $venv" python3-venv
    else
      fatal+=("$python has no venv or ensurepip module to create $venv: set RAGFAULT_PYTHON to one that has")
    fi
  fi
}

report() {
  local line
  for line in "${fatal[@]+"${fatal[@]}"}"; do
    say "$line"
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "the tests need these, which this machine lacks:"
    for line in "${missing[@]}"; do
      IFS='|' read -r _ what _ <<<"$line"
      echo "    $what" >&2
    done
  fi
}

packages() {
  local line list=() p
  for line in "${missing[@]}"; do
    IFS='|' read -r _ _ p <<<"$line"
    for p in $p; do [[ " ${list[*]-} " == *" $p "* ]] || list+=("$p"); done
  done
  echo "${list[@]}"
}

names() {
  local line list=() n
  for line in "${missing[@]}"; do
    IFS='|' read -r n _ _ <<<"$line"
    [[ $n == python || " ${list[*]-} " == *" $n "* ]] || list+=("$n")
  done
  echo "${list[*]-}" | tr ' ' ,
}

how_to_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo "
  say "install them with:"
  echo "    ${sudo}apt-get update && ${sudo}apt-get install -y $(packages)" >&2
  local opt_out
  opt_out=$(names)
  if [ -n "$opt_out" ]; then
    say "or run the tests without them (the tests that need them then skip): RAGFAULT_TESTS_WITHOUT=$opt_out ./$me"
  fi
}

check
if [ ${#fatal[@]} -gt 0 ]; then
  report
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$mode" = check ]; then
    report
    how_to_install
    exit 1
  fi
  as_root=()
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  fi
  if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" != 0 ] && [ ${#as_root[@]} = 0 ]; }; then
    report
    if command -v apt-get >/dev/null 2>&1; then
      say "this script installs them with apt-get, which needs root or sudo, and neither is here"
    else
      say "this script installs them with apt-get (Debian, Ubuntu), which is not here"
    fi
    how_to_install
    exit 1
  fi
  wanted=$(packages)
  say "installing $wanted"
  started=$SECONDS
  apt=("${as_root[@]+"${as_root[@]}"}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600)
  # the server package creates and starts a "main" cluster unless told not to; the tests make their own
  dropin=/etc/postgresql-common/createcluster.d/ragfault-tests.conf
  made_dropin=""
  if [[ " $wanted " == *" postgresql "* ]] && [ ! -e "$dropin" ]; then
    "${as_root[@]+"${as_root[@]}"}" sh -c "mkdir -p ${dropin%/*} && echo 'create_main_cluster = false' >$dropin"
    made_dropin=1
  fi
  installed=0
  # shellcheck disable=SC2086 # the package list is split on purpose
  if "${apt[@]}" update >/dev/null && "${apt[@]}" install -y --no-install-recommends $wanted >/dev/null; then
    installed=1
  fi
  [ -z "$made_dropin" ] || "${as_root[@]+"${as_root[@]}"}" rm -f "$dropin"
  if [ "$installed" = 0 ]; then
    say "apt-get could not install $wanted (its messages are above)"
    report
    how_to_install
    exit 1
  fi
  say "installing $wanted took $((SECONDS - started)) s"
  check
  if [ ${#missing[@]} -gt 0 ] || [ ${#fatal[@]} -gt 0 ]; then
    say "still missing after apt-get installed $wanted:"
    report
    say "(on Ubuntu, apt's chromium is a stub of the snap: install chromium another way and set RAGFAULT_CHROMIUM to it)"
    exit 1
  fi
fi
for name in haproxy postgresql chromium; do
  if going_without "$name"; then
    say "going without $name (RAGFAULT_TESTS_WITHOUT): the tests that need it skip"
  fi
done
if [ "$mode" = check ]; then
  say "the system has what the tests need"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  started=$SECONDS
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  say "creating $venv took $((SECONDS - started)) s"
fi
# the project again only when its declaration or the interpreter changed
stamp="$venv/.ragfault-test-install"
want=$({ cat pyproject.toml; "$venv/bin/python" -VV; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  started=$SECONDS
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
  echo "$want" >"$stamp"
  say "installing the project with its test extra into $venv took $((SECONDS - started)) s"
fi
if [ "$mode" = setup ]; then
  exit 0
fi

VIRTUAL_ENV=$(cd "$venv" && pwd)
export VIRTUAL_ENV PATH="$VIRTUAL_ENV/bin:$PATH"
exec "$VIRTUAL_ENV/bin/python" -m pytest -n auto --dist worksteal -q -p no:cacheprovider "$@"

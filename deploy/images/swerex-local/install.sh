#!/bin/sh
# Makes the SWE-ReX server start the two ways a sandbox start command may ask for it:
#   swerex-remote --port 8000 --auth-token TOKEN
#   python3 -m swerex.server --port 8000 --auth-token TOKEN      (the worker's default start command)
# Default: installs the project's runtime (runtime/, next to this script) as `swerex-remote`, run by the first
# Python 3.8+ found (SWEREX_PYTHON first). --shim-only: `swerex-remote` is already installed (the reference).
# PREFIX (default /usr/local) and SWEREX_SITE (default: the site-packages of the first python3 on PATH) exist so
# the recipe can be exercised outside an image.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-/usr/local}

if [ "${1:-}" != "--shim-only" ]; then
  PY=
  for candidate in "${SWEREX_PYTHON:-}" /opt/miniconda3/bin/python3 /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3 || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null; then
      PY=$candidate
      break
    fi
  done
  if [ -z "$PY" ]; then
    echo "swerex-local: no Python 3.8+ in this image; build with --build-arg SWEREX_PYTHON=/path/to/python3.8+" >&2
    exit 1
  fi
  mkdir -p "$PREFIX/bin"
  # -E -s: the image's PYTHON* variables and user site never change the server; -B: no .pyc next to it.
  printf '#!/bin/sh\nexec "%s" -E -s -B "%s/runtime/swerex_server.py" "$@"\n' "$PY" "$HERE" > "$PREFIX/bin/swerex-remote"
  chmod 755 "$PREFIX/bin/swerex-remote"
  echo "swerex-local: swerex-remote runs $HERE/runtime/swerex_server.py with $PY ($("$PY" -V 2>&1))"
fi

# `python3 -m swerex.server`: a one-module `swerex` package on the first python3's path hands over to
# swerex-remote (any Python 3 can run it), unless that python3 already has a real swerex.
SITE=${SWEREX_SITE:-}
PY3=$(command -v python3 || true)
if [ -z "$SITE" ] && [ -n "$PY3" ] && ! "$PY3" -c 'import swerex.server' >/dev/null 2>&1; then
  SITE=$("$PY3" -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
fi
if [ -n "$SITE" ]; then
  mkdir -p "$SITE"
  echo "$HERE/shim" > "$SITE/swerex-local.pth"
  echo "swerex-local: python3 -m swerex.server → swerex-remote (via $SITE/swerex-local.pth)"
fi

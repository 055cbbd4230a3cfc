#!/usr/bin/env bash
# The library is installable: a wheel builds from this checkout, installs into a fresh virtualenv (no
# system or project site-packages) with its pinned dependencies, and the `albert-explorer` console
# script runs there, outside the checkout and with PYTHONPATH unset.
#
# The dependencies are installed for real, by pip, from requirements' pins in pyproject.toml: pip takes
# torch from a local wheel folder when pip is configured with one (find-links) and the rest from the
# package index. Measured on a 2-core AMD EPYC: about 2 minutes for the whole script.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PY" -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir "$work/dist" .
rm -rf build albert_explorer.egg-info  # setuptools' scratch folders in the checkout

"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work"/dist/albert_explorer-*.whl

cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import albert_core, sys
assert albert_core.__file__.startswith(sys.prefix), albert_core.__file__  # the installed copy, not the checkout
# the shipped data came with the wheel: the lab's corpus, a trained tokenizer, the reference runs
from albert_core.text.corpus import load_corpus
from albert_core.lab.reference import load_reference
from albert_core.text.tokenizers import lab_tokenizer
assert len(load_corpus().train) > 100
assert lab_tokenizer("unigram", 2048).get_vocab_size() == 2048
assert load_reference()
# the small shipped WordPiece's text (text/data) and the measured DDP bytes (hardware/data)
from albert_core.hardware.profiles import load_measured
from albert_core.text.encoding import shipped_tokenizer
assert shipped_tokenizer(300).get_vocab_size() <= 300
assert load_measured()["rows"]
PY
out=$(env -u PYTHONPATH "$work/venv/bin/albert-explorer" params --preset albert-base --json)
env -u PYTHONPATH "$work/venv/bin/python" -c 'import json, sys; assert json.load(sys.stdin)["total"] == 11_683_584' <<<"$out"
env -u PYTHONPATH "$work/venv/bin/albert-explorer" params --preset albert-base | tail -1
echo "install check: wheel builds, installs and albert-explorer runs"

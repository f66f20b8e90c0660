#!/usr/bin/env bash
# The mask on the logits on a GPU (issue 44): `tokensieve logits --device cuda` at sizes
# that end in about 3 minutes, for a machine lent for 15. From the repository root:
#
#   OUT=/some/folder benchmarks/logits_gpu.sh [more tokensieve logits options]
#
# writes $OUT/logits/logits.csv, logits.json and log.txt (the table and the findings).
# Options given here come after the script's own, so a single-valued one (--device,
# --reps, --vocab-sizes, --batch) replaces the script's; --dtype adds to its list.
#
# Which Python: .venv/bin/python when it imports torch and xgrammar (a clone set up on
# that machine). Otherwise python3 with the repository on PYTHONPATH: a .venv carried
# from another machine does not run there (its interpreter and its packages live outside
# the repository, under ~/.pyenv and ~/.cache/tokensieve). The GPU machines' python3 has
# torch, triton, numpy, pandas and psutil but not xgrammar (nor regress, which the
# command line imports): carry them as wheels in .whl/, made on this side with
#
#   benchmarks/logits_gpu.sh --wheels      # Python 3.12, x86-64; about 8 MB
#
# (.whl/ must be git-ignored, e.g. `echo /.whl/ >> .git/info/exclude`, and carried), and
# this script installs them into /tmp/site before it runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# what xgrammar 0.2.8 needs beyond torch/transformers/numpy, and the command line's regress
WHEELS=(xgrammar==0.2.8 apache-tvm-ffi==0.1.15.post2 pydantic==2.14.4 pydantic-core==2.50.5
        annotated-types==0.8.0 typing-inspection==0.4.5 regress==2026.9.1)

if [[ "${1:-}" == "--wheels" ]]; then
    platforms=()
    for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
             manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
        platforms+=(--platform "$p")
    done
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp "${platforms[@]}" -d .whl "${WHEELS[@]}"
    exit
fi

out="${OUT:-reports}/logits"
mkdir -p "$out"

if .venv/bin/python -c 'import torch, xgrammar' 2>/dev/null; then
    py=.venv/bin/python
else
    py=python3
    if [[ -d .whl ]] && ! python3 -c 'import xgrammar, regress' 2>/dev/null; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --upgrade --target /tmp/site .whl/*.whl
        export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
    fi
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1

{
    echo "python: $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"
    command -v nvidia-smi >/dev/null && nvidia-smi -L || true
    # float32 and bfloat16 x the default sizes; the checks (numpy on the host) take most
    # of the time, the timed calls seconds
    timeout 480 "$py" -m harness.cli logits --device cuda --dtype float32,bfloat16 \
        --reps 50 --warmup 5 --out "$out" "$@"
} 2>&1 | tee "$out/log.txt"
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# Entry point of the Docker image. PROCESSES=1 (the default): one Streamlit process on PORT.
# PROCESSES=N (2..8): deploy/serve_many.sh, N Streamlit processes behind nginx on PORT (sticky by cookie).
set -euo pipefail
PROCESSES=${PROCESSES:-1}
PORT=${PORT:-8501}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Two malloc arenas per process (docs/deploy.md, "Sizing"): the image sets it; outside the image too.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}
if [[ $PROCESSES == 1 ]]; then
    exec python -m streamlit run app.py --server.port="$PORT" --server.address=0.0.0.0
fi
LISTEN=0.0.0.0 RUN_DIR=${RUN_DIR:-/tmp/albert-serve} exec bash deploy/serve_many.sh "$PROCESSES" "$PORT"

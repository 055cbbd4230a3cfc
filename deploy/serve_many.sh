#!/usr/bin/env bash
# Serve the ALBERT explorer with N Streamlit processes behind nginx: sticky sessions by cookie,
# websockets proxied, health at /_stcore/health. Runs in the foreground; stop it with Ctrl-C or
# SIGTERM (it stops its Streamlit processes and nginx). If any of them exits, all stop.
#
#   deploy/serve_many.sh [N=2] [PORT=8501]
#
# Environment: LISTEN (nginx address, default 127.0.0.1; 0.0.0.0 in a container), BASE_PORT (first
# Streamlit port, default PORT+1; they listen on 127.0.0.1 only), BACKEND_PORTS (explicit list, e.g.
# "8601 8602", instead of BASE_PORT), RUN_DIR (nginx config, pid, temp files and logs; default a new
# temporary directory), PYTHON (default python3), NGINX (default nginx on PATH or /usr/sbin/nginx).
set -euo pipefail
# Two malloc arenas per Streamlit process (docs/deploy.md, "Sizing"), unless set already.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}

N=${1:-2}
PORT=${2:-8501}
[[ $N =~ ^[1-8]$ ]] || { echo "serve_many.sh: N must be 1..8, not '$N'" >&2; exit 2; }
[[ $PORT =~ ^[0-9]{2,5}$ ]] && ((PORT < 65536)) || { echo "serve_many.sh: bad PORT '$PORT'" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LISTEN=${LISTEN:-127.0.0.1}
PYTHON=${PYTHON:-python3}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
RUN_DIR=${RUN_DIR:-$(mktemp -d -t albert-serve-XXXXXX)}
mkdir -p "$RUN_DIR"
if [[ -n ${BACKEND_PORTS:-} ]]; then
    read -r -a ports <<<"$BACKEND_PORTS"
    ((${#ports[@]} == N)) || { echo "serve_many.sh: BACKEND_PORTS needs $N ports" >&2; exit 2; }
else
    base=${BASE_PORT:-$((PORT + 1))}
    ports=()
    for ((i = 0; i < N; i++)); do ports+=($((base + i))); done
fi

pids=()
stop_all() {
    trap - EXIT TERM INT
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null || true
    wait || true
}
trap stop_all EXIT
trap 'exit 0' TERM INT

upstreams=""
for p in "${ports[@]}"; do
    # Each process reads .streamlit/config.toml from the repository root, as `streamlit run` does.
    (cd "$ROOT" && exec "$PYTHON" -m streamlit run app.py --server.port "$p" --server.address 127.0.0.1 \
        --server.headless true) >"$RUN_DIR/streamlit-$p.log" 2>&1 &
    pids+=($!)
    upstreams+="        server 127.0.0.1:$p max_fails=0;"$'\n'
done

sed -e "s|@LISTEN@|$LISTEN|g" -e "s|@PORT@|$PORT|g" -e "s|@RUN_DIR@|$RUN_DIR|g" \
    "$ROOT/deploy/nginx.conf.template" | awk -v up="$upstreams" '$1 == "@UPSTREAMS@" {printf "%s", up; next} {print}' \
    >"$RUN_DIR/nginx.conf"
"$NGINX" -e stderr -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" -t -q
"$NGINX" -e stderr -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" &
pids+=($!)
echo "serving on http://$LISTEN:$PORT with ${#ports[@]} Streamlit process(es) on ports ${ports[*]} (run dir $RUN_DIR)"

wait -n
echo "serve_many.sh: a process exited; stopping the others" >&2
exit 1

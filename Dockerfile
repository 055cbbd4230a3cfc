# ALBERT architecture explorer: the Streamlit app on CPU-only torch, as a non-root user (uid 1000, as
# Hugging Face Spaces expects). Build: docker build -t albert-explorer .  Run: docker run -p 8501:8501 albert-explorer
FROM python:3.11-slim

# Nothing is ever fetched from a model hub (checkpoints are local folders only). The budget is the
# largest live model (weights + one forward pass) a visitor may build; see docs/deploy.md. Two malloc arenas:
# glibc's default (8 per core) kept about 120 MiB more at the peak of the load test's 15 Live model sessions
# (1,051-1,062 MiB against 928-938 MiB, docs/load-test.md).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    ALBERT_EXPLORER_MEMORY_BUDGET=512MiB \
    MALLOC_ARENA_MAX=2

# CPU-only torch first, then everything else (pip sees torch==2.13.0 already satisfied when it reads
# requirements.txt). Pass PyTorch's CPU wheel index as the build argument TORCH_INDEX_URL (the "CPU"
# variant of PyTorch's install instructions; on Spaces, a variable of that name): the default wheel
# bundles CUDA, about 2 GB more for a server that never uses a GPU.
ARG TORCH_INDEX_URL=""
# The counters the Explorer's audit compares with (requirements-audit.txt) come too: without them the audit
# lists each as "not installed".
# The trained MiniLM's files (requirements-nodeps.txt) without the dependencies their package declares.
COPY requirements.txt requirements-audit.txt requirements-nodeps.txt /tmp/
RUN if [ -n "$TORCH_INDEX_URL" ]; then pip install --index-url "$TORCH_INDEX_URL" torch==2.13.0; fi \
    && pip install -r /tmp/requirements-audit.txt \
    && pip install --no-deps -r /tmp/requirements-nodeps.txt \
    && rm /tmp/requirements.txt /tmp/requirements-audit.txt /tmp/requirements-nodeps.txt

# nginx (Debian's) only for PROCESSES > 1: several Streamlit processes behind it (deploy/serve_many.sh).
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user
WORKDIR /home/user/app
COPY --chown=user . .

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"

# Settings (headless, no file watcher, no usage stats, no error details, XSRF on) come from .streamlit/config.toml.
# PROCESSES=1 (default): one Streamlit process on 8501. PROCESSES=2 (e.g. on 2 vCPU): two Streamlit
# processes on 127.0.0.1 behind nginx on 8501, sticky by cookie, websockets proxied (docs/deploy.md).
# This image was not built on the development machine (no Docker there); serve_many.sh was run there as is.
ENV PROCESSES=1 PORT=8501
CMD ["bash", "deploy/start.sh"]

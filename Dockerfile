# The node's image: the platform runs it with the node inputs as environment variables
# (GT_DATASET, PRED_DATASET, IOU_MIN, IOU_PERFECT, CONFIDENCE_THRESHOLD), plus PRELABEL_STORE
# and boto3's AWS_* variables when the asset store is S3.
#
#   docker build -t prelabel-eval .
#   docker run --rm -e GT_DATASET=/src/examples/gt.json \
#       -e PRED_DATASET=/src/examples/predictions.jsonl prelabel-eval
#
# tests/node/test_dockerfile.py runs this file's `pip install` and ENTRYPOINT lines in a fresh venv.

# Any official Python slim image of version >= 3.11 (the dependency layer reads pyproject.toml
# with tomllib; the package itself supports 3.10 too).
ARG PYTHON_BASE=python:3.11-slim
FROM ${PYTHON_BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# The runtime dependencies first, in their own layer, from pyproject.toml alone: a code change
# reuses this layer from the cache; only a change of pyproject.toml reinstalls them. The `images`
# extra (Pillow) too: on the platform the store holds the assets, so the sketches can show them.
COPY pyproject.toml /src/
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print(*p['dependencies'], *p['optional-dependencies']['images'], sep='\n')" > requirements.txt && pip install --no-cache-dir -r requirements.txt && rm requirements.txt
# Then the code, and the package without dependencies (installed above; no dev/test extras). Its
# wheel's build hook compiles the C kernels (handler/kernels): a compiler is there for this step
# only, removed in the same layer.
COPY . /src
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install --no-cache-dir --no-deps . \
    && apt-get purge -y --auto-remove gcc libc6-dev && rm -rf /var/lib/apt/lists/*

# Not root: the node only reads datasets and writes its report to the store.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin prelabel
USER prelabel
# Writable, and outside /src so `python -m handler` imports the installed package; the
# embedded default store (./prelabel-store) lands here unless PRELABEL_STORE says otherwise.
WORKDIR /home/prelabel

ENTRYPOINT ["python", "-m", "handler"]

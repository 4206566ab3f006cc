# The node's image: the platform runs it with the node inputs as environment variables
# (GT_DATASET, PRED_DATASET, IOU_MIN, IOU_PERFECT, CONFIDENCE_THRESHOLD), plus PRELABEL_STORE
# and boto3's AWS_* variables when the asset store is S3.
#
#   docker build -t prelabel-eval .
#   docker run --rm -e GT_DATASET=/src/examples/gt.json \
#       -e PRED_DATASET=/src/examples/predictions.jsonl prelabel-eval
#
# tests/test_dockerfile.py runs this file's `pip install` and ENTRYPOINT lines in a fresh venv.

# Any official Python slim image of a supported version (>= 3.10).
ARG PYTHON_BASE=python:3.11-slim
FROM ${PYTHON_BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY . /src
# The package and its runtime dependencies only: no dev/test extras in the image.
RUN pip install --no-cache-dir .

# Not root: the node only reads datasets and writes its report to the store.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin prelabel
USER prelabel
# Writable, and outside /src so `python -m handler` imports the installed package; the
# embedded default store (./prelabel-store) lands here unless PRELABEL_STORE says otherwise.
WORKDIR /home/prelabel

ENTRYPOINT ["python", "-m", "handler"]

# syntax=docker/dockerfile:1
# asched's container image: `docker build -t asched:0.1.0 .`
#
# Two stages: the builder installs asched and its dependencies into a virtualenv with pip
# (every dependency ships binary wheels, so no compiler is needed); the final image holds
# that virtualenv on the same Python base and nothing else - no pip cache, no sources.
# It runs as the fixed non-root UID/GID 65532, which manifests/deployment.yaml also sets
# (runAsNonRoot needs a numeric USER to verify).

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/asched
WORKDIR /src
COPY pyproject.toml README.md ./
COPY asched/ asched/
# The package ships the RBAC and CRD manifests (symlinked from asched/localcluster/data/).
COPY manifests/ manifests/
# A regular (not editable) install: the virtualenv must not point back at /src.
RUN /opt/asched/bin/pip install --no-cache-dir . \
    && /opt/asched/bin/asched --help > /dev/null

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="asched" \
      org.opencontainers.image.description="An asynchronous, event-driven, pluggable Kubernetes scheduler in Python" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 65532 asched \
    && useradd --system --uid 65532 --gid 65532 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin asched
COPY --from=builder /opt/asched /opt/asched
# Bytecode was compiled at install time; the root filesystem is read-only in the pod.
ENV PATH=/opt/asched/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
USER 65532:65532
# /healthz, /livez, /readyz and /metrics over HTTPS (delegated authn/authz for /metrics).
EXPOSE 10259
ENTRYPOINT ["asched"]
CMD ["run"]

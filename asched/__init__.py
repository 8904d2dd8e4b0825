"""asched: an asynchronous, event-driven, pluggable Kubernetes scheduler."""

import os

# numpy starts an OpenBLAS thread pool per core when it is imported, and asched never calls
# BLAS (its arrays are compared, summed and indexed, never multiplied as matrices). The
# pool cost 0.1 s of CPU at every start (0.50 against 0.40 s to import asched.app on two
# cores), a tenth of a 1000-pod run's start-up. One thread unless the operator chose.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys

# structlog imports rich (with pygments) whenever rich is installed, for its console
# renderer's pretty tracebacks; rich is here as a dependency of common-expression-language,
# which DRA imports on its first device selector. asched renders tracebacks plainly
# (logs.py), so hide rich from structlog's one import: it was 4.8 MiB of resident memory
# and 30 ms of start-up. rich stays importable afterwards; if something imported
# structlog or rich before asched, nothing changes.
if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.modules["rich"] = None  # type: ignore[assignment]  # `import rich` raises ImportError
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]

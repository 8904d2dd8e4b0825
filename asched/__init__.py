"""asched: an asynchronous, event-driven, pluggable Kubernetes scheduler."""

import os

# numpy starts an OpenBLAS thread pool per core when it is imported, and asched never calls
# BLAS (its arrays are compared, summed and indexed, never multiplied as matrices). The
# pool cost 0.1 s of CPU at every start (0.50 against 0.40 s to import asched.app on two
# cores), a tenth of a 1000-pod run's start-up. One thread unless the operator chose.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

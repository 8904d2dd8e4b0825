"""The first request of `asched run`: is the API server there at all?

Without this check a wrong server address or a dead API server leaves asched running,
every informer logging its failed LIST forever. kube-controller-manager faces the same
question and answers it in WaitForAPIServer: poll the server once a second for up to 10
seconds (it may be starting at the same moment), then fail. asched does the same, and a
failure is a StartupError, reported as one line:

    asched: cannot reach the API server at https://127.0.0.1:6443: connection refused

What counts as an answer: any HTTP answer except 401 and 5xx. A 401 means the credentials
are wrong (waiting will not fix it: fail at once); a 5xx means the server is up but not
serving yet (wait). `GET /version` is used because every identity may read it
(system:public-info-viewer) and it answers in JSON.
"""

from __future__ import annotations

import errno
import socket
import ssl

import structlog

from asched.base.clock import Clock, run_within
from asched.base.errors import StartupError
from asched.client.protocol import ApiError, KubeClient, TransportError

log = structlog.get_logger(__name__)

# kube-controller-manager's WaitForAPIServer(client, 10*time.Second), polled every second.
DEFAULT_WAIT = 10.0
POLL_INTERVAL = 1.0
# One attempt may take this long even past the deadline (RestClient's connect timeout), so
# a slow but working server is not given up on mid-handshake.
ATTEMPT_TIMEOUT = 10.0
VERSION_PATH = "/version"


class ApiServerUnreachable(StartupError):
    """The API server gave no usable answer within the start-up wait."""


async def wait_for_api_server(
    client: KubeClient, host: str, clock: Clock, *, wait: float = DEFAULT_WAIT
) -> None:
    """Return once `host` answers; raise ApiServerUnreachable after `wait` seconds
    (of `clock`) without an answer, or at once when it refuses the credentials."""
    deadline = clock.now() + wait
    while True:
        why = await _try_once(client, host, clock, deadline)
        if why is None:
            return
        remaining = deadline - clock.now()
        if remaining <= 0:
            raise ApiServerUnreachable(f"cannot reach the API server at {host}: {why}")
        # Retries are expected while the server starts: logged below the default level,
        # so a failed start prints the one line and nothing else.
        log.debug("api_server_not_ready", host=host, reason=why)
        await clock.sleep(min(POLL_INTERVAL, remaining))


async def _try_once(client: KubeClient, host: str, clock: Clock, deadline: float) -> str | None:
    """None when the server answered; else why not, in a few words."""
    why = "no answer in time"
    refused: ApiError | None = None

    async def attempt() -> None:
        nonlocal why, refused
        try:
            await client.request("GET", VERSION_PATH)
        except ApiError as err:
            if err.status == 401:
                refused = err  # raised below: from inside run_within it would be grouped
            why = f"it answers {err.status} {err.reason}" if err.status >= 500 else ""
        except TransportError as err:
            why = describe_transport_error(err)
        else:
            why = ""

    await run_within(clock, max(deadline - clock.now(), ATTEMPT_TIMEOUT), attempt)
    if refused is not None:
        raise ApiServerUnreachable(
            f"the API server at {host} refused the credentials: 401 {refused.reason}"
        ) from refused
    return why or None


def describe_transport_error(err: BaseException) -> str:
    """The root cause of a transport failure in a few words ("connection refused")."""
    cause: BaseException | None = err
    while cause is not None:
        # The event loop's connect errors are plain OSErrors ("Connect call failed
        # ('127.0.0.1', 6443)") whose errno alone says what happened.
        if isinstance(cause, ConnectionRefusedError) or _errno(cause) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve the host name ({cause.strerror or cause})"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS certificate not trusted ({cause.verify_message or cause})"
        if isinstance(cause, ssl.SSLError):
            return f"TLS handshake failed ({cause.reason or cause})"
        if isinstance(cause, TimeoutError):
            return "timed out"
        if isinstance(cause, ConnectionResetError) or _errno(cause) == errno.ECONNRESET:
            return "connection reset"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
        cause = cause.__cause__
    return str(err)


def _errno(exc: BaseException) -> int | None:
    return exc.errno if isinstance(exc, OSError) else None

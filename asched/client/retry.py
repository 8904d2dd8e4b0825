"""When the API client sends a request again by itself: client-go's rules, nothing more.

client-go's Request.request (rest/request.go) runs every request through a WithRetry
(rest/with_retry.go IsNextRetry) with these rules, and asched follows them so that a
throttled or restarting API server costs asched what it costs kube-scheduler:
- an answer of 429, or of 5xx, that carries a Retry-After header of whole seconds is sent
  again after that many seconds, whatever the verb (checkWait): the server said the
  request was not applied and when to come back;
- a GET whose connection broke after it was sent (reset, closed before the answer was
  complete: IsConnectionReset, IsProbableEOF) is sent again after a second
  (retryAfterResponse), and no other verb is: a write cut off may have been applied, and
  only its caller knows whether repeating it is safe;
- at most `max_retries` (client-go's default 10) times.
Everything else reaches the caller at once, classified (asched.client.protocol.FailureKind).
"""

from __future__ import annotations

from dataclasses import dataclass

from asched.client.protocol import TransportError

# client-go's Request.maxRetries default (rest/request.go NewRequest).
MAX_RETRIES = 10
# client-go's retryAfterResponse: the wait a retriable transport failure gets.
BROKEN_GET_WAIT = 1.0


def retry_after_seconds(header: str | None) -> int | None:
    """A Retry-After header's whole seconds; None when absent or not a number
    (client-go's retryAfterSeconds uses strconv.Atoi: no HTTP dates, no fractions)."""
    if not header:
        return None
    text = header.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isdigit():
        return None
    return int(text)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long to wait before retry number `retries + 1`, or None for no retry."""

    max_retries: int = MAX_RETRIES
    broken_get_wait: float = BROKEN_GET_WAIT

    def after_answer(self, status: int, retry_after: str | None, retries: int) -> float | None:
        """For an answer with *status* and this Retry-After header (checkWait)."""
        if retries >= self.max_retries or not (status == 429 or status >= 500):
            return None
        seconds = retry_after_seconds(retry_after)
        return None if seconds is None else float(max(0, seconds))

    def after_failure(self, method: str, exc: TransportError, retries: int) -> float | None:
        """For a request that got no answer (request.go's isErrRetryableFunc)."""
        if retries >= self.max_retries or method != "GET" or not exc.broken:
            return None
        return self.broken_get_wait

"""What the harness says when a tracking server refuses it: who asked, for what, and the fix.

A team server (MLflow's basic-auth app) answers 401 to missing or wrong credentials and
403 to an account that may read but not write. The gate only reads; ``run``, ``baseline
register`` and ``baseline promote`` write, so a read-only account is refused there.
"""

from __future__ import annotations

from .._exceptions import TrackingError
from .._settings import hide_uri_password, tracking_auth

_CREDENTIALS = "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN)"


def is_refusal(exc: Exception) -> bool:
    """A 401 or 403 answer, as MLflow's client reports it."""
    return str(getattr(exc, "error_code", "")) in ("UNAUTHENTICATED", "PERMISSION_DENIED")


def why_unauthenticated(uri: str) -> str:
    """Why a server answered 401, from what this process sent: nothing, or which credentials."""
    from urllib.parse import urlsplit

    auth = tracking_auth()
    try:
        in_uri = urlsplit(uri).username
    except ValueError:
        in_uri = None
    if auth.token is not None:
        return "wrong credentials: the token in MLFLOW_TRACKING_TOKEN was not accepted"
    if auth.username is not None and auth.password is None:
        return f"MLFLOW_TRACKING_USERNAME is {auth.username!r} but MLFLOW_TRACKING_PASSWORD is unset"
    if auth.username is not None:
        return f"wrong credentials: the password of user {auth.username!r} was not accepted"
    if in_uri:
        return f"wrong credentials: the user {in_uri!r} and password in MLFLOW_TRACKING_URI were not accepted"
    return "no credentials were sent"


def refusal(exc: Exception, uri: str, action: str) -> TrackingError | None:
    """A TrackingError naming the account and the fix for a 401 or 403 answer; None for anything else.

    ``action`` completes "refused to ...", e.g. "log the run to experiment 'extraction-eval'".
    """
    code = str(getattr(exc, "error_code", ""))
    auth = tracking_auth()
    if code == "UNAUTHENTICATED":
        why = why_unauthenticated(uri)
        message = (
            f"tracking server {uri!r} refused to {action}: {why} (401). "
            f"Set {_CREDENTIALS} to an account of that server."
        )
    elif code == "PERMISSION_DENIED":
        who = f"user {auth.username!r}" if auth.username else "this account"
        message = (
            f"tracking server {uri!r} refused to {action}: {who} may not write there (403 Permission denied). "
            "The gate only reads; `run`, `baseline register` and `baseline promote` write, so run them as an "
            f"account with EDIT on the experiment and the registered models (CI's writer), through {_CREDENTIALS}."
        )
    else:
        return None
    return TrackingError(hide_uri_password(message, uri))

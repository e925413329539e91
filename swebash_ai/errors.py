"""One error tree, rendered at the edges (the TUI notifies, one-shot prints to stderr).

SwebashError
 +-- ConfigError              bad setting, unknown profile, unreadable config file (exit 2)
 |    +-- UsageError              a command-line mistake argparse cannot see (exit 2)
 +-- ProviderError            anything the model provider did wrong (exit 1)
 |    +-- AuthenticationError     bad or missing key
 |    +-- ModelNotFoundError      unknown model name
 |    +-- ContextTooLongError     the conversation does not fit the model's context
 |    +-- BadRequestError         the provider refused the request for another reason
 |    |    +-- ImageInputError        the model takes no images (known before the request, or refused)
 |    +-- RateLimitError          429 after all retries              (retryable)
 |    +-- ProviderUnavailableError  connection refused, 5xx, timeout (retryable)
 |    +-- IncompleteAnswerError   the stream ended without its end marker    (retryable)
 |    +-- StreamInterruptedError  the stream broke after it had started: the answer is incomplete (exit 4)
 |    +-- NotTheApiError          what answered is not the API (an HTML page, plain text, odd JSON)
 +-- ToolError                a tool failed in a way the loop cannot turn into a result

Exit codes (:class:`ExitCode`) are the command line's API; :class:`UsageError` is a command-line mistake
argparse cannot see (exit 2).
"""

from __future__ import annotations

import enum


class SwebashError(Exception):
    """Base of every error the user may see. ``title`` is a short heading, ``message`` the detail."""

    title = "Error"

    def __init__(self, message: str, *, title: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class ConfigError(SwebashError):
    title = "Configuration error"


class ProviderError(SwebashError):
    title = "Provider error"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        title: str | None = None,
        hint: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, title=title, hint=hint)
        self.status = status
        self.retry_after = retry_after


class AuthenticationError(ProviderError):
    title = "Authentication failed"


class ModelNotFoundError(ProviderError):
    title = "Unknown model"


class ContextTooLongError(ProviderError):
    title = "Conversation too long"


class BadRequestError(ProviderError):
    title = "Request refused"


class ImageInputError(BadRequestError):
    """An image was attached for a model that takes none: said before the request when litellm's model data
    knows it, else when the provider refuses the request (never retried: it would refuse again)."""

    title = "The model takes no images"


class RateLimitError(ProviderError):
    title = "Rate limited"
    retryable = True


class ProviderUnavailableError(ProviderError):
    title = "Provider unavailable"
    retryable = True


class IncompleteAnswerError(ProviderError):
    """The stream ended (cleanly or not) before its end marker: a finish reason or ``[DONE]`` (OpenAI),
    ``message_stop`` (Anthropic), ``done`` (Ollama). Retried while nothing of it was shown."""

    title = "Incomplete answer"
    retryable = True


class StreamInterruptedError(ProviderError):
    """The stream broke after part of the answer was shown: what arrived is kept, marked incomplete."""

    title = "Incomplete answer"


class NotTheApiError(ProviderError):
    """Something other than the model's API answered (a proxy's page, a web server, a wrong path): asking
    again would get the same page, so it is never retried."""

    title = "Not the API"


class ToolError(SwebashError):
    title = "Tool error"


class ExitCode(enum.IntEnum):
    """Exit codes of ``swebash-ai`` (documented in docs/cli.md; scripts rely on them)."""

    OK = 0
    """The question was answered."""
    ERROR = 1
    """The provider failed (unreachable, refused the key, ...) or an internal error happened."""
    USAGE = 2
    """Bad command line or configuration (including: no provider configured)."""
    DENIED = 3
    """An action the answer needed was denied (by the user, or because nobody could approve it)."""
    INCOMPLETE = 4
    """The answer broke off: what arrived is on stdout and in the session (marked incomplete), the rest is not."""
    INTERRUPTED = 130
    """Ctrl-C: the turn was cancelled; the session is saved."""


class UsageError(ConfigError):
    """A command-line mistake argparse cannot see (exit 2). Its message names the slip and what to type instead,
    so the one-line form (``swebash-ai: message``) carries no title; a ``ConfigError``, for the TUI's catch."""

    title = "Usage error"

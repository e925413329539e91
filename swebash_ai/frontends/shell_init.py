"""``swebash-ai shell-init bash|zsh|fish``: the key binding that turns the words on the line into a command.

The snippet binds one key (Alt-E unless ``--key`` or ``SWEBASH_AI_SHELL_KEY`` says otherwise). Pressed, it
sends the current line to ``swebash-ai --shell -c`` and replaces the line in place with the proposed
command, cursor at its end, **without running it**: the user reads, edits and presses Enter. An empty line
does nothing; while waiting a small marker shows; on failure the line is left as it was and the command's
short message (on stderr) is shown. The verdict line of ``--shell`` reaches the terminal the same way.

Only the standard library, no settings: printing a snippet must be instant (it runs in every new shell).
"""

from __future__ import annotations

import os
import re

SHELLS = ("bash", "zsh", "fish")
DEFAULT_KEY = "alt-e"
KEY_ENV = "SWEBASH_AI_SHELL_KEY"

SETUP = """\
add one line to your shell's start-up file:
  bash  ~/.bashrc                    eval "$(swebash-ai shell-init bash)"
  zsh   ~/.zshrc                     eval "$(swebash-ai shell-init zsh)"
  fish  ~/.config/fish/config.fish   swebash-ai shell-init fish | source
then type what you want in plain words and press Alt-E: the line becomes a command you can read, edit and
run with Enter (nothing runs by itself). --key or SWEBASH_AI_SHELL_KEY picks another key: alt-X or ctrl-X."""

_KEY_RE = re.compile(r"^(alt|ctrl)-([a-z])$")


class ShellInitError(ValueError):
    """A shell or key this command cannot bind (a usage error)."""


def detect_shell(environ: dict[str, str] | None = None) -> str:
    """The shell named by ``$SHELL`` (its basename), if it is one we support."""
    env = os.environ if environ is None else environ
    name = os.path.basename(env.get("SHELL", ""))
    if name not in SHELLS:
        shown = f"$SHELL is {name!r}" if name else "$SHELL is not set"
        raise ShellInitError(f"shell-init: {shown}; name the shell: {' | '.join(SHELLS)}.")
    return name


def key_sequence(shell: str, key: str) -> str:
    """The binding syntax of ``key`` (``alt-e``, ``ctrl-g``) for ``shell``."""
    match = _KEY_RE.match(key.strip().lower())
    if match is None:
        raise ShellInitError(f"shell-init: cannot bind {key!r}; use alt-LETTER or ctrl-LETTER, e.g. alt-e.")
    mod, letter = match.groups()
    if mod == "alt":
        return f"\\e{letter}"
    return {"bash": f"\\C-{letter}", "zsh": f"^{letter.upper()}", "fish": f"\\c{letter}"}[shell]


_BASH = r"""# swebash-ai shell integration for bash: KEY turns the words on the line into a command (not run).
__swebash_ai_line() {
  [[ -z "${READLINE_LINE//[[:space:]]/}" ]] && return 0
  local out msg errf="${TMPDIR:-/tmp}/swebash-ai-key-$$.err"
  printf '\r\033[K\342\200\246 swebash-ai: %s' "$READLINE_LINE" >&2
  if out=$(SWEBASH_AI_SHELL_VERDICT=1 swebash-ai --shell -c "$READLINE_LINE" </dev/null 2>"$errf") \
      && [[ -n "$out" ]]; then
    READLINE_LINE=$out
    READLINE_POINT=${#READLINE_LINE}
  fi
  msg=$(cat -- "$errf")  # not $(<file): in a bind -x function bash 5.2 then runs the next line mangled
  rm -f -- "$errf"
  if [[ -n "$msg" ]]; then printf '\r\033[K%s\n' "$msg" >&2; else printf '\r\033[K' >&2; fi
}
bind -x '"SEQ": __swebash_ai_line'
"""

_ZSH = r"""# swebash-ai shell integration for zsh: KEY turns the words on the line into a command (not run).
__swebash_ai_line() {
  [[ -z "${BUFFER//[[:space:]]/}" ]] && return 0
  local out msg errf="${TMPDIR:-/tmp}/swebash-ai-key-$$.err"
  POSTDISPLAY=$'  \u2026 swebash-ai'
  zle -R
  if out=$(SWEBASH_AI_SHELL_VERDICT=1 swebash-ai --shell -c "$BUFFER" </dev/null 2>"$errf") && [[ -n "$out" ]]; then
    BUFFER=$out
    CURSOR=${#BUFFER}
  fi
  msg="$(cat -- "$errf")"
  rm -f -- "$errf"
  POSTDISPLAY=
  [[ -n "$msg" ]] && zle -M "$msg"
  zle -R
}
zle -N __swebash_ai_line
bindkey 'SEQ' __swebash_ai_line
"""

_FISH = r"""# swebash-ai shell integration for fish: KEY turns the words on the line into a command (not run).
function __swebash_ai_line
    set -l line (commandline)
    if string match -qr '^\s*$' -- "$line"
        return
    end
    set -l dir /tmp
    set -q TMPDIR[1]; and set dir $TMPDIR
    set -l errf $dir/swebash-ai-key-$fish_pid.err
    printf ' \u2026' >&2
    set -l out (SWEBASH_AI_SHELL_VERDICT=1 swebash-ai --shell -c "$line" </dev/null 2>$errf)
    if test $status -eq 0 -a -n "$out"
        commandline -r -- "$out"
        commandline -f end-of-line
    end
    set -l msg (cat $errf)
    rm -f -- $errf
    printf '\r\033[K' >&2
    if test -n "$msg"
        printf '%s\n' $msg >&2
    end
    commandline -f repaint
end
bind SEQ __swebash_ai_line
bind -M insert SEQ __swebash_ai_line 2>/dev/null
"""

_TEMPLATES = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}


def snippet(shell: str, key: str | None = None, environ: dict[str, str] | None = None) -> str:
    """The code to evaluate in ``shell``; ``key`` defaults to ``$SWEBASH_AI_SHELL_KEY``, then Alt-E."""
    env = os.environ if environ is None else environ
    if shell not in SHELLS:
        raise ShellInitError(f"shell-init: unknown shell {shell!r}; choose from {', '.join(SHELLS)}.")
    chosen = key or env.get(KEY_ENV) or DEFAULT_KEY
    seq = key_sequence(shell, chosen)
    return _TEMPLATES[shell].replace("SEQ", seq).replace("KEY", chosen.strip().lower())

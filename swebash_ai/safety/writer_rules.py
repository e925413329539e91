"""Programs that are not read-only but start no other program: the table's entries off the read-only list.

Contract:
    Importing this module registers ``mkdir``, ``touch``, ``rm``, ``cp``, ``mv``, ``ln``, ``chmod``, ``tee``..., the
    shell builtins a script uses to move and to stop (``cd``, ``set -e``, ``read NAME``, ``exit``), ``less`` (it
    reads, but is interactive) and ``npm ls`` (it reads the project's configuration) with
    :func:`swebash_ai.safety.programs.register` and ``read_only=False``: the classifier still asks about them
    (they write), but the rules' question, "does this use start another program?"
    (:func:`~swebash_ai.safety.programs.runs_nothing`), has an answer for them. An option not listed here
    leaves a use unproven, as everywhere in the table.

Why:
    With a deny or ask rule in force only a proven command runs without a person
    (:mod:`~swebash_ai.safety.proven`); ``mkdir build && cp a b`` writes, but can never start the program a rule
    names. ``less`` starts a program only through ``LESSOPEN``/``LESSCLOSE`` (the executor drops both, and a
    command that sets them is not proven), a ``+COMMAND`` word or a key file; with its output a pipe it copies
    its files like ``cat``. ``read`` and ``set`` are here with their plain forms only: ``read 'a[$(id)]'``
    evaluates a subscript, ``read PATH`` changes where programs are found.

Pure: standard library only.
"""

from __future__ import annotations

import re

from swebash_ai.safety.programs import ProgramCheck, Spec, check_spec, fs, register, safe_variable

__all__ = ["WRITERS"]

WRITERS: dict[str, Spec] = {
    "mkdir": Spec(flags="pv", long_flags=fs("--parents --verbose --help --version"), short_values="m",
                  long_values=fs("--mode")),
    "rmdir": Spec(flags="pv", long_flags=fs("--parents --verbose --ignore-fail-on-non-empty --help --version")),
    "touch": Spec(flags="acfhm", long_flags=fs("--no-create --no-dereference --time --help --version"),
                  short_values="drt", long_values=fs("--date --reference")),
    "rm": Spec(flags="fiIrRdv", long_flags=fs("--force --interactive --one-file-system --preserve-root "
                                               "--no-preserve-root --recursive --dir --verbose --help --version")),
    "cp": Spec(flags="aAbdfHilLnPprRsTuvx", short_values="St",
               long_flags=fs("--archive --attributes-only --backup --copy-contents --dereference --force "
                             "--interactive --link --no-clobber --no-dereference --parents --recursive --reflink "
                             "--remove-destination --sparse --strip-trailing-slashes --symbolic-link "
                             "--no-target-directory --update --verbose --one-file-system --preserve --help "
                             "--version"),
               long_values=fs("--suffix --target-directory --no-preserve")),
    "mv": Spec(flags="bfinTuv", short_values="St",
               long_flags=fs("--backup --force --interactive --no-clobber --strip-trailing-slashes "
                             "--no-target-directory --update --verbose --help --version"),
               long_values=fs("--suffix --target-directory")),
    "ln": Spec(flags="bdfFinLPrsTv", short_values="St",
               long_flags=fs("--backup --directory --force --interactive --logical --no-dereference --physical "
                             "--relative --symbolic --no-target-directory --verbose --help --version"),
               long_values=fs("--suffix --target-directory")),
    "tee": Spec(flags="aip", long_flags=fs("--append --ignore-interrupts --output-error --help --version")),
    "truncate": Spec(flags="co", short_values="sr", long_flags=fs("--no-create --io-blocks --help --version"),
                     long_values=fs("--size --reference")),
    "sleep": Spec(operands="text"),
    **{name: Spec(operands="text") for name in ("cd", "pushd", "popd", "exit", "return", "shift", "wait")},
}
_MODE = re.compile(r"(?:[0-7]{1,4}|(?:[ugoa]*[-+=](?:[rwxXst]*|[ugo]))(?:,[ugoa]*[-+=](?:[rwxXst]*|[ugo]))*)")
_CHMOD = Spec(flags="cfvR", long_flags=fs("--changes --silent --quiet --verbose --no-preserve-root --preserve-root "
                                          "--recursive --help --version"), long_values=fs("--reference"))
_LESS = Spec(flags="NnSRrXFiIJmMseEqQfKLw~", short_values="xjyzbhp",
             long_flags=fs("--LINE-NUMBERS --line-numbers --chop-long-lines --RAW-CONTROL-CHARS --raw-control-chars "
                           "--no-init --quit-if-one-screen --ignore-case --IGNORE-CASE --status-column --long-prompt "
                           "--LONG-PROMPT --squeeze-blank-lines --quit-at-eof --QUIT-AT-EOF --quiet --QUIET --silent "
                           "--SILENT --force --quit-on-intr --no-lessopen --help --version --mouse --incsearch"),
             long_values=fs("--tabs --shift --pattern --jump-target --window --max-back-scroll"))
_NPM_LS = Spec(flags="al", long_flags=fs("--all --json --long --parseable --production --prod --dev --link --unicode "
                                         "--no-unicode --omit --include --package-lock-only --help"),
               long_values=fs("--depth"), operands="text")
_SET_OPTIONS = fs("errexit nounset pipefail xtrace errtrace noclobber noglob")


def _check_chmod(args: list[str]) -> ProgramCheck:
    """chmod MODE FILE...: a mode such as ``-x`` or ``u+x,go-w`` is an operand, not an option."""
    words = [a for a in args if not _MODE.fullmatch(a)]
    return check_spec("chmod", _CHMOD, words)


def _check_less(args: list[str]) -> ProgramCheck:
    """less with display options only: a ``+COMMAND`` word runs less commands (``+!cmd`` a shell command)."""
    out = check_spec("less", _LESS, args)
    out.problems += [f"less {a}: a +COMMAND word runs less commands, a shell command among them"
                     for a in args if a.startswith("+")]
    return out


def _check_npm(args: list[str]) -> ProgramCheck:
    """``npm ls`` (``list``): it prints the installed tree; every other npm subcommand may run package scripts."""
    out = ProgramCheck()
    if not args or args[0] not in ("ls", "list", "ll", "la"):
        out.problems.append("npm runs package scripts (only npm ls is known not to)")
        return out
    return check_spec("npm ls", _NPM_LS, args[1:])


def _check_read(args: list[str]) -> ProgramCheck:
    """``read [-r] [-s] [-d D] [-n N] [-p P] [-t T] [-u FD] NAME...``: each NAME a plain variable it may set."""
    out = ProgramCheck()
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        flag = args[i]
        i += 1
        if flag in ("-d", "-n", "-N", "-p", "-t", "-u"):
            i += 1
        elif flag in ("-a",) and i < len(args):
            i += 0  # -a NAME: the name is checked below like the others
        elif not re.fullmatch(r"-[rs]+", flag):
            out.problems.append(f"read {flag}: not a known option of read (-e runs readline, others are unknown)")
    names = args[i + (1 if i < len(args) and args[i] == "--" else 0):]
    for name in names:
        if not safe_variable(name):
            out.problems.append(f"read {name}: reading into {name} can change what runs, or evaluate a subscript")
    return out


def _check_set(args: list[str]) -> ProgramCheck:
    """``set -e``, ``set -euo pipefail``, ``set -- WORDS``: shell options that never run anything."""
    out = ProgramCheck()
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            break
        if a in ("-o", "+o") and i < len(args) and args[i] in _SET_OPTIONS:
            i += 1
        elif not re.fullmatch(r"[-+][euxvfCEo]+", a) or ("o" in a and i >= len(args)):
            out.problems.append(f"set {a}: only -e, -u, -x, -o pipefail and the like are proven")
        elif "o" in a:
            if args[i] not in _SET_OPTIONS:
                out.problems.append(f"set {a} {args[i]}: not a known option")
            i += 1
    return out


for _name, _spec in WRITERS.items():
    register(_name, _spec, read_only=False)
register("chmod", _check_chmod, read_only=False)
register("read", _check_read, read_only=False)
register("less", _check_less, read_only=False)
register("npm", _check_npm, read_only=False)
register("set", _check_set, read_only=False)

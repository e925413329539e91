"""Parts of bash text proven to be plain data: arithmetic over known integers, here-document bodies, words.

Contract:
    :func:`heredoc_problem` says whether bash and the parser agree on where a here-document's body ends and
    whether bash expands anything in it.  :func:`arith_problem` takes the text between ``$((`` and ``))`` (or
    ``((`` and ``))``) and says why bash could do more than compute with it, or ``None`` when every token is an
    integer literal, an operator that neither assigns nor changes a variable, or the name of a loop variable
    bound to integer literals only (``is_integer_var``).  :data:`PLACEHOLDER` is the text a proven ``$((...))``
    stands for while the policy judges the command: bash puts an integer there, never a path or code.
    :func:`unescape_double_quoted` gives the text bash makes of a double-quoted string.

Why:
    Bash evaluates arithmetic recursively: a name's value is itself evaluated as an expression, and an array
    subscript runs command substitution whatever the quoting (``$(( a[$(id)] ))``, or ``$((x))`` with
    ``x='a[$(id)]'``).  So a name is accepted only when its value is known to be an integer literal: a ``for``
    variable whose list holds integer literals only, never a variable bound by a glob (a file name), read from
    a file or inherited from the environment.  Assignments (``=``, ``+=``, ``++``...) are refused: they change
    what later arithmetic and commands see.

    A here-document body is data on standard input, unless bash and the parser disagree on where it ends: a
    line bash takes as the end and the parser does not (``EOF `` with a blank, a delimiter quoted in pieces)
    would make the rest of the "body" commands bash runs unseen.  So the delimiter must be a plain name,
    quoted as a whole or not at all, and the lines are checked here, not taken from the parser.

Pure: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["PLACEHOLDER", "arith_problem", "heredoc_problem", "unescape_double_quoted"]

PLACEHOLDER = "7000000001"  # an integer no one writes by hand: where it lands in argv is checked
_TOKEN = re.compile(
    r"\s+"
    r"|(?P<num>0[xX][0-9A-Fa-f]+|[0-9]+)(?![A-Za-z0-9_#])"
    r"|\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}"
    r"|\$?(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^!~?:,()])"
)
_NAME = "[A-Za-z_][A-Za-z0-9_]*"
# <<EOF, <<\EOF, <<'EOF', <<"EOF": a plain name, quoted as a whole or not at all (group 4: unquoted)
_HEREDOC_DELIM = re.compile(rf"\\({_NAME})|'({_NAME})'|\"({_NAME})\"|({_NAME})")
_ASSIGNING = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)")  # ++ -- = += -= <<= ... (but not == != <= >=)


def arith_problem(expr: str, is_integer_var: Callable[[str], bool]) -> str | None:
    """Why ``expr`` is not proven plain arithmetic, or ``None`` when it is."""
    if _ASSIGNING.search(expr):
        return f"the arithmetic {expr.strip()!r} assigns or changes a variable"
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:
            return (f"the arithmetic {expr.strip()!r} holds {expr[pos]!r}: only integer literals, operators and "
                    "loop variables bound to integer literals are proven (bash evaluates subscripts and names)")
        name = m.group("braced") or m.group("name")
        if name is not None and not is_integer_var(name):
            return (f"the arithmetic {expr.strip()!r} evaluates the variable {name!r}, whose value is not known to "
                    "be an integer literal (bash evaluates a name's value as arithmetic, which can run commands)")
        pos = m.end()
    return None


def heredoc_problem(node: Any, src: bytes) -> tuple[str | None, Any, Any, Any]:
    """Why the here-document ``node`` (a tree-sitter ``heredoc_redirect``) is not proven data, or ``None``.

    Proven: a plain delimiter; the body starts on the line after the ``<<`` (nothing on that line runs past
    it); no line of the body is the delimiter (bash would end there); the end line is exactly the delimiter
    (after the tabs ``<<-`` strips); and an unquoted delimiter's body holds no ``$`` and no backtick.

    Returns:
        ``(why, start, end, body)``: the reason (or ``None``) and the nodes of the delimiter, end and body,
        which the caller skips when it walks the rest of the line.
    """
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    end = next((c for c in node.children if c.type == "heredoc_end"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    m = _HEREDOC_DELIM.fullmatch(start.text.decode(errors="replace")) if start is not None else None
    if start is None or end is None or m is None:
        return "only a plain delimiter such as <<'EOF' is checked", start, end, body
    strip_tabs = any(c.type == "<<-" for c in node.children)
    delim = m.group(1) or m.group(2) or m.group(3) or m.group(4)
    first_nl = src.find(b"\n", start.end_byte)
    body_start = body.start_byte if body is not None else end.start_byte
    line_start = src.rfind(b"\n", 0, end.start_byte) + 1
    line_end = src.find(b"\n", end.end_byte)
    end_line = src[line_start : len(src) if line_end < 0 else line_end].decode(errors="replace")
    text = src[first_nl + 1 : line_start].decode(errors="replace")
    lead = src[first_nl + 1 : body_start]  # the parser's body may start after leading blanks
    lines = text.split("\n")[:-1] if text else []
    others = [c for c in node.children if c not in (start, end, body) and c.end_byte > first_nl]
    why = None
    if first_nl < 0 or body_start <= first_nl or lead.strip(b" \t") or others:
        why = "its body does not start on the next line"
    elif any((ln.lstrip("\t") if strip_tabs else ln) == delim for ln in lines):
        why = "a line of the body is the delimiter"
    elif (end_line.lstrip("\t") if strip_tabs else end_line) != delim:
        why = "its last line is not exactly the delimiter"
    elif m.group(4) is not None and ("$" in text or "`" in text):
        why = "its delimiter is not quoted, so bash expands $ and backticks in the body (quote it: <<'EOF')"
    return why, start, end, body


def unescape_double_quoted(s: str) -> str:
    """The text of double-quoted string content: ``\\`` drops before ``$ ` \" \\`` and a newline."""
    out: list[str] = []
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in '$`"\\\n':
            if s[i + 1] != "\n":
                out.append(s[i + 1])
            i += 2
            continue
        out.append(s[i])
        i += 1
    return "".join(out)

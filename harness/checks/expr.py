"""Usage expressions: integers, `+ - *`, parentheses and dotted names (`upstream.input_tokens`).

Parsed with `ast` and walked by hand: nothing is ever evaluated by Python itself, and anything
outside that grammar is an `ExprError` (reported as a violation, never raised out of a check).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from harness.errors import ExprError

ROOTS = frozenset({"upstream", "usage"})


Resolver = Callable[[str], int]  # dotted name -> value; raises ExprError when it has none


def evaluate(expression: str | int, resolve: Resolver) -> int:
    if isinstance(expression, bool) or not isinstance(expression, (int, str)):
        raise ExprError(f"an expression is a string or an integer, not {type(expression).__name__}")
    if isinstance(expression, int):
        return expression
    return _eval(_parse(expression).body, resolve)


def _parse(expression: str) -> ast.Expression:
    try:
        return ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"cannot parse {expression!r}: {exc.msg}") from None


def _eval(node: ast.AST, resolve: Resolver) -> int:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        left, right = _eval(node.left, resolve), _eval(node.right, resolve)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        return left * right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, resolve)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        return resolve(_dotted(node))
    raise ExprError(
        f"not allowed in a usage expression: {ast.unparse(node)!r} (only + - *, parentheses, integers, names)"
    )


def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ExprError(f"not a dotted name: {ast.unparse(node)!r}")
    parts.append(node.id)
    dotted = ".".join(reversed(parts))
    if parts[-1] not in ROOTS or len(parts) < 2:
        raise ExprError(f"unknown name {dotted!r}: names start with upstream. or usage.")
    return dotted

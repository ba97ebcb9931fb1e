"""A classmate's answers copied and disguised as colluding students disguise them, for the similarity report's tests and
benchmarks.

Each disguise rewrites the code of each graded cell with ``ast`` (names renamed, statements reordered, dead code and
docstrings added, loops rewritten, a function's middle pulled out into a helper, cells split, code moved to the cell
after the graded one or to the notebook's end) and says where each piece goes (``Placed``). The rewrites keep what
the code computes; ``mixed`` and ``mixed_more`` combine most of them.
"""
from __future__ import annotations

import ast
import builtins
import random
from dataclasses import dataclass, field

# the names a graded cell must define: a copier keeps them, and the parameters of the functions that define them
KEPT = frozenset({"initialize_vanilla_model", "finetune", "train", "CharCorruptionDataset", "pretrain",
                  "SynthesizerAttention", "initialize_synthesizer_model", "q_copy", "M", "q_avg", "q_single", "q_1",
                  "q_2", "c2_plain", "K", "Q", "V", "P", "permuted_output", "position_embeddings", "self"})
DEAD = ("_unused = 0", "if False:\n    print('debug')", "assert True", "_scratch = [i for i in range(3)]",
        "_checked = len('ok') > 0")
DOCSTRINGS = ("Work out the answer step by step.", "Computed as the handout describes.", "My own version of this.")
DISGUISES = ("renamed", "reordered", "dead_code", "comments", "loops", "helper", "split", "moved", "mixed",
             "mixed_more")


@dataclass
class Placed:
    """Where a copier's code for one graded cell stands in the notebook."""

    graded: str | None  # the graded cell's code (None: left as released)
    split: list[str] = field(default_factory=list)  # cells right after it that repeat its grade_id (Split Cell)
    after: list[str] = field(default_factory=list)  # untagged cells right after it (and after the split ones)
    end: list[str] = field(default_factory=list)  # untagged cells at the notebook's end


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _top_params(tree: ast.Module) -> set[str]:
    """The parameters of the cell's top-level functions and methods: callers may pass them by name."""
    found = set()
    for node in tree.body:
        for fn in [node, *(node.body if isinstance(node, ast.ClassDef) else [])]:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found |= {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    return found


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)


def renamed(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Every name the cell binds, but the answers' names and their functions' parameters, renamed."""
    bound = _stored(tree) | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    methods = {m.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for m in c.body
               if isinstance(m, ast.FunctionDef)}  # called as attributes, which keep their names
    keep = KEPT | _top_params(tree) | methods | set(dir(builtins))
    words = ["val", "tmp", "item", "res", "acc", "part", "buf", "cur", "obj", "elem"]
    names = {n: f"{rng.choice(words)}_{i}" for i, n in enumerate(sorted(bound - keep)) if not n.startswith("__")}
    return _Rename(names).visit(tree)


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    """Two plain assignments that neither read nor write what the other writes."""
    if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign)):
        return False
    wa, wb = _stored(a), _stored(b)
    plain = all(isinstance(t, ast.Name) for t in a.targets + b.targets)
    return plain and not (wa & wb or wa & _read(b) or wb & _read(a))


def _swap_body(body: list[ast.stmt]) -> list[ast.stmt]:
    out, i = [], 0
    while i < len(body):
        if i + 1 < len(body) and _independent(body[i], body[i + 1]):
            out += [body[i + 1], body[i]]
            i += 2
        else:
            out.append(body[i])
            i += 1
    return out


def reordered(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Functions and classes first, last defined first; methods in reverse; independent assignments swapped."""
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    rest = [s for s in tree.body if s not in defs]
    tree.body = list(reversed(defs)) + rest
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            node.body = list(reversed(node.body))
        if isinstance(node, ast.FunctionDef):
            node.body = _swap_body(node.body)
    return tree


def dead_code(tree: ast.Module, rng: random.Random) -> ast.Module:
    """A statement that does nothing after every second statement of every function body."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            body = []
            for i, statement in enumerate(node.body):
                if i % 2 == 1:
                    body += ast.parse(rng.choice(DEAD)).body
                body.append(statement)
            node.body = body
    return tree


def _docstring(node) -> bool:
    return bool(node.body) and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
        and isinstance(node.body[0].value.value, str)


def comments(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Every function and class with a docstring of the copier's own words (comments are added to the text later)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            text = ast.Expr(ast.Constant(rng.choice(DOCSTRINGS)))
            node.body = [text, *node.body[1:]] if _docstring(node) else [text, *node.body]
    return tree


def _with_comments(code: str, rng: random.Random) -> str:
    words = ("# the next step", "# as in the handout", "# TODO tidy this up", "# check shapes here")
    lines = []
    for line in code.splitlines():
        if line.strip() and not line.rstrip().endswith((",", "(", "[")) and rng.random() < 0.4:
            lines.append(line[:len(line) - len(line.lstrip())] + rng.choice(words))
        lines.append(line)
    return "\n".join(lines) + "\n"


def _range_loop(node: ast.For) -> list[ast.stmt] | None:
    """``for v in range(a, b): ...`` as a while loop, when nothing in it skips the increment."""
    call = node.iter
    if not (isinstance(node.target, ast.Name) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "range" and 1 <= len(call.args) <= 2 and not node.orelse
            and not any(isinstance(n, (ast.Continue, ast.Break)) for n in ast.walk(node))):
        return None
    start, stop = (ast.Constant(0), call.args[0]) if len(call.args) == 1 else call.args
    v = node.target.id
    limit = f"_stop_{v}"
    return [ast.parse(f"{limit} = {ast.unparse(stop)}").body[0], ast.parse(f"{v} = {ast.unparse(start)}").body[0],
            ast.While(ast.parse(f"{v} < {limit}", mode="eval").body,
                      [*node.body, ast.parse(f"{v} += 1").body[0]], [])]


def _comprehension_loop(node: ast.Assign, counter: list[int]) -> list[ast.stmt] | None:
    """``x = f([e for c in s if k])`` (or ``x = [...]``) as a loop that appends."""
    if len(node.targets) != 1:
        return None
    value = node.value
    holder = value if isinstance(value, ast.ListComp) else next(
        (a for a in getattr(value, "args", [])[:1] if isinstance(a, ast.ListComp)), None) if isinstance(
        value, ast.Call) else None
    if holder is None or len(holder.generators) != 1 or holder.generators[0].is_async:
        return None
    gen = holder.generators[0]
    counter[0] += 1
    items = f"_items_{counter[0]}"
    append: ast.stmt = ast.parse(f"{items}.append({ast.unparse(holder.elt)})").body[0]
    for condition in reversed(gen.ifs):
        append = ast.If(condition, [append], [])
    loop = ast.For(gen.target, gen.iter, [append], [])
    if value is holder:
        return [ast.parse(f"{items} = []").body[0], loop, ast.Assign(node.targets, ast.Name(items, ast.Load()))]
    value.args[0] = ast.Name(items, ast.Load())
    return [ast.parse(f"{items} = []").body[0], loop, node]


class _Loops(ast.NodeTransformer):
    def __init__(self):
        self.counter = [0]

    def generic_visit(self, node):
        super().generic_visit(node)
        for name in ("body", "orelse"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out = []
                for s in body:
                    changed = _range_loop(s) if isinstance(s, ast.For) else _comprehension_loop(
                        s, self.counter) if isinstance(s, ast.Assign) else None
                    out += changed or [s]
                setattr(node, name, out)
        return node


def loops(tree: ast.Module, rng: random.Random) -> ast.Module:
    """Counting for-loops as while loops, list comprehensions as loops that append."""
    return _Loops().visit(tree)


def _extract(fn: ast.FunctionDef, name: str) -> ast.FunctionDef | None:
    """Pull the middle of ``fn``'s body into a helper function ``name`` (returned), ``fn`` calling it."""
    body = fn.body[1:] if _docstring(fn) else fn.body
    if len(body) < 4:
        return None
    lo, hi = 1, len(body) - 1
    chunk, after = body[lo:hi], body[hi:]
    if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)) for s in chunk
           for n in ast.walk(s)):
        return None
    known = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    for s in body[:lo]:
        known |= _stored(s)
    stored = set().union(*map(_stored, chunk))
    inputs = sorted(set().union(*map(_read, chunk)) & known)
    outputs = sorted(stored & set().union(*map(_read, after)))
    result = "(" + ", ".join(outputs) + ",)" if len(outputs) > 1 else (outputs[0] if outputs else "None")
    helper = ast.parse(f"def {name}({', '.join(inputs)}):\n    return {result}").body[0]
    helper.body = [*chunk, helper.body[0]]
    call = f"{name}({', '.join(inputs)})"
    line = f"{', '.join(outputs)} = {call}" if outputs else call
    fn.body = fn.body[:len(fn.body) - len(body)] + body[:lo] + ast.parse(line).body + after
    return helper


def helpers(tree: ast.Module) -> list[ast.FunctionDef]:
    """Each function's and method's middle pulled out into a helper of its own; the helpers, in order."""
    found = []
    for node in list(ast.walk(tree)):
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_part_"):
            made = _extract(node, f"_part_{len(found) + 1}")
            if made is not None:
                found.append(made)
    return found


def _methods_out(tree: ast.Module) -> list[ast.stmt]:
    """Each class's methods (those that need no ``super()``) taken out of it, as functions set on the class later."""
    later = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        moved = [m for m in node.body if isinstance(m, ast.FunctionDef)
                 and not any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(m))]
        node.body = [s for s in node.body if s not in moved] or [ast.Pass()]
        for method in moved:
            function = f"_{node.name.lower()}_{method.name.strip('_')}"
            later += [ast.FunctionDef(function, method.args, method.body, method.decorator_list, method.returns,
                                      type_params=[]),
                      ast.parse(f"{node.name}.{method.name} = {function}").body[0]]
    return later


def _text(nodes) -> str:
    return ast.unparse(ast.fix_missing_locations(ast.Module(list(nodes), type_ignores=[]))) + "\n"


REWRITES = {"renamed": renamed, "reordered": reordered, "dead_code": dead_code, "comments": comments,
            "loops": loops}


def disguised(kind: str, given: dict[str, str], seed: int) -> dict[str, Placed]:
    """grade_id -> where the copier's disguised code of ``given[grade_id]`` stands."""
    rng = random.Random(seed)
    out = {}
    for grade_id, code in given.items():
        tree = ast.parse(code)
        if kind in REWRITES:
            text = _text(REWRITES[kind](tree, rng).body)
            out[grade_id] = Placed(_with_comments(text, rng) if kind == "comments" else text)
        elif kind == "helper":
            made = helpers(tree)
            out[grade_id] = Placed(_text([*made, *tree.body]))
        elif kind == "split":
            pieces = [_text([s]) for s in tree.body]
            out[grade_id] = Placed(pieces[0], split=pieces[1:])
        elif kind == "moved":  # the graded cell as released (its stub fails, tagged raises-exception), code after it
            out[grade_id] = Placed(None, after=[code])
        elif kind in ("mixed", "mixed_more"):
            for rewrite in ((renamed, loops, dead_code, comments) if kind == "mixed" else (reordered, loops, renamed)):
                tree = rewrite(tree, rng)
            made = helpers(tree)
            later = _methods_out(tree) if kind == "mixed_more" else []
            pieces = [_text([s]) for s in tree.body]
            if kind == "mixed":  # the helpers in the cell after the graded one
                out[grade_id] = Placed(_text(tree.body), after=[_text(made)] if made else [])
            else:  # split, helpers and methods in a cell after it, dead code and comments last
                after = [_text(dead_code(ast.Module([*made, *later], type_ignores=[]), rng).body)] \
                    if made or later else []
                out[grade_id] = Placed(pieces[0], split=pieces[1:], after=after)
        else:
            raise ValueError(kind)
    return out

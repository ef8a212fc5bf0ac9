"""Functions applied element by element that the language cannot spell itself:
``tl.inline_asm_elementwise`` (foreign assembly) and ``tl.map_elementwise`` (a scalar @jit function,
which may branch and loop per element where ``tl.where`` would compute both sides).

Triton's names, signatures and typing rules (its ``core.py``): the arguments broadcast to one shape
without promotion (each keeps its dtype, pointers allowed), ``dtype`` is one element type or a
tuple of them (then a tuple of tensors comes back), and the assembly runs ``pack`` elements at a
time. Only a target that runs foreign assembly lowers it (``DeviceHooks.inline_asm``); the others
say so when they meet it. ``tl.map_elementwise`` runs everywhere: its function is traced once on
scalars into the region of a ``tile.map_elementwise``, which each target runs per element.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence

from . import dtypes as T
from . import semantic
from .core import _unwrap, tensor
from .semantic import SemanticError

WHAT = "tl.inline_asm_elementwise"
_mapping = threading.local()  # depth of map_elementwise functions being traced


def refuse_writes_in_map(what: str) -> None:
    """Raise when ``what`` (a store or an atomic) is in a function ``tl.map_elementwise`` traces:
    as in Triton, that function computes values only (GPUs run it per register, where memory
    writes would not be per element)."""
    if getattr(_mapping, "depth", 0):
        raise SemanticError(f"{what} inside tl.map_elementwise's function: it may compute values only, not write "
                            f"memory (store the results it returns instead)")


@contextlib.contextmanager
def _tracing_map() -> Iterator[None]:
    _mapping.depth = getattr(_mapping, "depth", 0) + 1
    try:
        yield
    finally:
        _mapping.depth -= 1


def unsupported_message(target: str) -> str:
    """What a target that cannot run foreign assembly says when a kernel uses it."""
    return (f"{WHAT} is not supported on the {target} target: its assembly is written for one GPU's "
            f"instruction set and cannot run here; compute the values with tl operations instead")


#: the declared conformance gap of a target that runs no foreign assembly (the cases' asm is PTX)
FOREIGN_ASSEMBLY_GAPS = {"inline_asm-ptx-*": "foreign assembly: tl.inline_asm_elementwise's PTX cannot run on "
                                             "this target"}


def _dtypes(dtype) -> tuple[tuple[T.dtype, ...], bool]:
    """The result element types and whether ``dtype`` named several (a tuple)."""
    dtype = _unwrap(dtype)
    several = isinstance(dtype, (tuple, list))
    types = tuple(_unwrap(t) for t in dtype) if several else (dtype,)
    if not types:
        raise SemanticError(f"{WHAT} needs at least one result dtype (return a dummy one if the asm has none)")
    for t in types:
        if not isinstance(t, T.dtype) or t.is_ptr():
            raise SemanticError(f"{WHAT}: dtype must be a tl element type or a tuple of them, got {t!r}")
    return types, several


def inline_asm_elementwise(asm: str, constraints: str, args: Sequence, dtype, is_pure: bool, pack: int):
    """Run the inline assembly ``asm`` over the broadcast ``args``, ``pack`` elements per call.

    ``constraints`` are LLVM's (``"=r,=r,r"``): the outputs first, ``pack`` registers per result
    (elements under 32 bits packed into 32-bit registers), then the inputs, packed alike. Returns
    one tensor of ``dtype``, or a tuple of tensors when ``dtype`` is a tuple."""
    asm, constraints, pack, is_pure = (_unwrap(v) for v in (asm, constraints, pack, is_pure))
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise SemanticError(f"{WHAT}: asm and constraints must be constant strings")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        raise SemanticError(f"{WHAT}: pack must be a positive constant integer, got {pack!r}")
    types, several = _dtypes(dtype)
    args = [semantic.to_tensor(_unwrap(a)) for a in (_unwrap(args) or ())]
    shape: tuple[int, ...] = ()
    for a in args:
        shape = semantic.broadcast_shapes(shape, a.shape)
    args = [semantic.broadcast_to(a, shape) for a in args]
    handles = semantic.builder().inline_asm(asm, constraints, [a.handle for a in args], [a.dtype for a in args],
                                            types, shape, bool(is_pure), pack)
    results = tuple(tensor(h, t, shape) for h, t in zip(handles, types))
    return results if several else results[0]


def map_elementwise(scalar_fn, *args, pack=1):
    """Apply the @jit ``scalar_fn`` to each element of the broadcast ``args`` (at least one a
    block); it returns one scalar (one tensor comes back) or a tuple of them (a tuple comes back).
    With ``pack`` > 1 (a power of two dividing the last dimension) each call takes ``pack``
    consecutive elements of each argument (``x0, x1, y0, y1`` for two arguments and pack 2) and
    returns ``pack`` values of each result in the same order."""
    from ..runtime.jit import JITFunction  # the runtime imports the language

    what = "tl.map_elementwise"
    fn, pack = _unwrap(scalar_fn), _unwrap(pack)
    if not isinstance(fn, JITFunction):
        raise SemanticError(f"{what}'s scalar_fn must be a @jit function, got {fn!r}")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1 or pack & (pack - 1):
        raise SemanticError(f"{what}: pack must be a constant power of two, got {pack!r}")
    xs = [semantic.to_tensor(_unwrap(a)) for a in args]
    shape: tuple[int, ...] = ()
    for x in xs:
        shape = semantic.broadcast_shapes(shape, x.shape)
    if not shape:
        raise SemanticError(f"{what} needs at least one block argument (call {fn.__name__} directly on scalars)")
    if shape[-1] % pack:
        raise SemanticError(f"{what}: pack={pack} must divide the last dimension of the shape {list(shape)}")
    xs = [semantic.broadcast_to(x, shape) for x in xs]

    def body(handles: list) -> tuple[list, list]:
        scalars = [tensor(h, x.dtype, ()) for i, x in enumerate(xs) for h in handles[i * pack:(i + 1) * pack]]
        with _tracing_map():
            out = fn(*scalars)
        outs = [semantic.to_tensor(_unwrap(o)) for o in (out if isinstance(out, tuple) else (out,))]
        if not outs or len(outs) % pack or any(o.shape != () for o in outs):
            raise SemanticError(f"{what}: {fn.__name__} must return {pack} scalar(s) per result (got "
                                f"{[list(o.shape) for o in outs] if outs else 'nothing'})")
        types = [outs[r * pack].dtype for r in range(len(outs) // pack)]
        outs = [semantic.cast(o, types[i // pack]) for i, o in enumerate(outs)]
        return [o.handle for o in outs], types

    handles, types = semantic.builder().map_elementwise([x.handle for x in xs], [x.dtype for x in xs], shape, pack,
                                                         body)
    results = tuple(tensor(h, t, shape) for h, t in zip(handles, types))
    return results[0] if len(results) == 1 else results

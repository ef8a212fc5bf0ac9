"""The ``tile-layout`` stage of a whole-block target: every tensor gets a ``#tile.blocked`` encoding
of SIMD chunks.

One program runs on one core, so there is a single "thread" and a single "warp"; what the
encoding carries is the chunk the code generator computes at once: ``size_per_thread`` is
``[1, ..., 1, V]`` with ``V`` SIMD lanes along the contiguous last dimension. ``V`` counts 32-bit
lanes of the host's vector registers and depends only on the shape, never on the element type, so
every tensor of one shape shares one layout: elementwise ops, masks and pointers of a shape can be
fused into one loop and no ``tile.convert_layout`` is ever needed (64-bit elements simply span two
registers per chunk).
"""

from __future__ import annotations

from ...ir import tile
from ...ir.mlir import ir
from ...layout import assign_encodings
from ...passes.decomposed import lower_decomposed
from ...passes.prefetch import prefetch_stores


def encoding(shape: list[int], vector_bits: int) -> ir.Attribute:
    """The blocked encoding of a tensor of ``shape``: V = min(last dim, 32-bit lanes)."""
    rank = len(shape)
    lanes = min(shape[-1], vector_bits // 32)
    return tile.blocked([1] * (rank - 1) + [lanes], [1] * rank, [1] * rank, list(range(rank - 1, -1, -1)))


def chunk_width(t: ir.RankedTensorType) -> int:
    """The number of elements the code generator handles at once along the last dimension."""
    return tile.blocked_fields(t.encoding)["size_per_thread"][-1]


def assign_layouts(module: ir.Module, vector_bits: int) -> ir.Module:
    """Give every ranked tensor type in ``module`` its chunk encoding, in place; ops that carry their
    decomposition run it (``passes.decomposed``): a sort's rounds are whole-vector ops here."""
    lower_decomposed(module)
    return assign_encodings(module, lambda t: encoding(list(t.shape), vector_bits))


def layout_stage(vector_bits: int, prefetch: bool = False):
    """The ``tile-layout`` stage for ``vector_bits``-wide SIMD (``BlockHooks.vector_bits``);
    ``prefetch``: the lines of each store are prefetched for writing while the program computes
    (``passes.prefetch``), for a target whose cores wait on such fetches."""

    def tile_layout(module: ir.Module, ctx) -> ir.Module:
        """Assign SIMD-chunk layouts (#tile.blocked) to every tensor."""
        if prefetch:
            prefetch_stores(module)
        return assign_layouts(module, vector_bits)

    return tile_layout

"""Where a matrix instruction's operand lies in shared memory: the swizzled tile.

An operand (``codegen.threads.warp_matrix``, ``codegen.threads.rings``) is stored as a matrix of
``rows`` x ``cols`` elements in its stored order (row-major, or its transpose where its threads
hold runs down the columns). Rows are cut into column blocks of at most 128 bytes, stored one
after the other (block ``j`` holds columns ``j * block_cols ..``, all rows, row-major). Inside a
block each row's 16-byte chunks are permuted: chunk ``c`` of row ``r`` sits at ``c ^ phase(r)``,
the phase changing every row when a block row has 8 chunks (128 bytes), else every
``8 / chunks`` rows. So the same chunk of 8 consecutive rows falls in 8 different 16-byte bank
groups (fragment loads such as ``ldmatrix`` read them without bank conflicts), and the tile is
exactly a warpgroup instruction's 128-, 64- or 32-byte swizzle mode (NVIDIA's ``wgmma``
shared-memory descriptors) when it starts at a multiple of ``alignment`` bytes.
"""

from __future__ import annotations

import dataclasses

#: bytes of one chunk, the unit the swizzle permutes (the widest vector access)
CHUNK_BYTES = 16
#: rows over which the permutation repeats, and the widest block row, in chunks
PERIOD_ROWS = 8


@dataclasses.dataclass(frozen=True)
class SwizzledTile:
    """A ``rows`` x ``cols`` matrix of ``element_bytes``-byte elements in shared memory."""

    rows: int
    cols: int
    element_bytes: int

    @property
    def chunk_elements(self) -> int:
        return max(1, CHUNK_BYTES // self.element_bytes)

    @property
    def block_cols(self) -> int:
        """Elements in one row of a column block."""
        return min(self.cols, self.chunk_elements * PERIOD_ROWS)

    @property
    def chunks(self) -> int:
        """16-byte chunks in one row of a column block (1: no swizzle)."""
        return max(1, self.block_cols // self.chunk_elements)

    @property
    def rows_per_phase(self) -> int:
        return max(1, PERIOD_ROWS // self.chunks)

    @property
    def swizzle_bytes(self) -> int:
        """The bytes of a block row when it is swizzled (128, 64 or 32), else 0."""
        return self.block_cols * self.element_bytes if self.chunks > 1 else 0

    @property
    def block_elements(self) -> int:
        """Elements of one column block: the distance between blocks."""
        return self.rows * self.block_cols

    @property
    def alignment(self) -> int:
        """The bytes the tile's start must be a multiple of for its swizzle to be the address-based
        one of a warpgroup instruction: one period of rows."""
        return max(CHUNK_BYTES, PERIOD_ROWS * self.block_cols * self.element_bytes)

    @property
    def periods(self) -> tuple[int, int]:
        """Rows and columns apart that two elements share their place in the permutation: their
        index then differs by ``delta`` of the difference."""
        return (PERIOD_ROWS, self.block_cols) if self.chunks > 1 else (1, 1)

    def delta(self, rows: int, cols: int) -> int:
        """The index difference of two elements ``rows`` and ``cols`` apart, multiples of ``periods``."""
        return cols // self.block_cols * self.block_elements + rows * self.block_cols + cols % self.block_cols

    def index(self, row: int, col: int) -> int:
        """The element index of ``(row, col)`` from the tile's start."""
        block, col = divmod(col, self.block_cols)
        chunk, within = divmod(col, self.chunk_elements)
        if self.chunks > 1:
            chunk ^= (row // self.rows_per_phase) % self.chunks
        return block * self.block_elements + row * self.block_cols + chunk * self.chunk_elements + within

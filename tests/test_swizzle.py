"""The swizzled tile a matrix instruction's operands are stored in (``layout.swizzle``)."""

from __future__ import annotations

import pytest

from tritium.layout.swizzle import SwizzledTile

SHAPES = [(64, 64, 2), (64, 256, 2), (16, 32, 2), (32, 16, 2), (128, 8, 2), (64, 32, 4), (32, 128, 1), (8, 4, 4)]


@pytest.mark.parametrize("rows,cols,size", SHAPES)
def test_every_element_has_its_own_place(rows, cols, size):
    tile = SwizzledTile(rows, cols, size)
    places = {tile.index(r, c) for r in range(rows) for c in range(cols)}
    assert places == set(range(rows * cols))


@pytest.mark.parametrize("rows,cols,size", SHAPES)
def test_eight_rows_of_one_chunk_lie_in_different_bank_groups(rows, cols, size):
    tile = SwizzledTile(rows, cols, size)
    if tile.chunks < 8 or rows < 8:
        pytest.skip("fewer than 8 chunks a row: the rows of a block load share a 128-byte line")
    for c in range(0, cols, tile.chunk_elements):
        for r0 in range(0, rows, 8):
            groups = {tile.index(r, c) * size // 16 % 8 for r in range(r0, r0 + 8)}
            assert len(groups) == 8


@pytest.mark.parametrize("rows,cols,size", SHAPES)
def test_the_swizzle_is_the_address_based_one_of_warpgroup_instructions(rows, cols, size):
    """From an ``alignment``-aligned start, the byte address of each element is its address in the
    unswizzled block (row-major, rows of ``swizzle_bytes``) with address bits 4.. XORed by bits 7..:
    the 128-, 64- and 32-byte swizzle modes of NVIDIA's wgmma descriptors."""
    tile = SwizzledTile(rows, cols, size)
    if not tile.swizzle_bytes:
        pytest.skip("rows of one 16-byte chunk are not swizzled")
    assert tile.swizzle_bytes in (32, 64, 128) and tile.alignment == 8 * tile.swizzle_bytes
    mask = tile.swizzle_bytes // 16 - 1
    for r in range(rows):
        for c in range(cols):
            block, col = divmod(c, tile.block_cols)
            plain = block * tile.block_elements * size + r * tile.swizzle_bytes + col * size
            assert tile.index(r, c) * size == plain ^ (((plain >> 7) & mask) << 4)


@pytest.mark.parametrize("rows,cols,size", SHAPES)
def test_elements_a_period_apart_are_a_constant_apart(rows, cols, size):
    tile = SwizzledTile(rows, cols, size)
    pr, pc = tile.periods
    for r in range(0, rows, max(1, rows // 4)):
        for c in range(0, cols, max(1, cols // 4)):
            for dr in range(0, rows - r, pr):
                for dc in range(0, cols - c, pc):
                    assert tile.index(r + dr, c + dc) - tile.index(r, c) == tile.delta(dr, dc)

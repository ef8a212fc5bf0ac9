"""Layouts that targets share: the ``#tile.blocked`` encoding (defined in ``tritium.ir.tile``) and
the pass that gives every tensor of a module the encoding a target chooses."""

from .assign import assign_encodings

__all__ = ["assign_encodings"]

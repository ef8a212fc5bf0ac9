"""String function attributes (``"amdgpu-flat-work-group-size"="1,256"``, ``"nvvm.maxntid"="128"``)
on llvmlite functions.

llvmlite prints only LLVM's keyword attributes; GPU back ends read their launch bounds from string
attributes. Assign ``StringAttributes({...})`` to ``fn.attributes`` and the IR text carries both
kinds, so no target edits IR text afterwards."""

from __future__ import annotations

from llvmlite import ir as ll
from llvmlite.ir.values import FunctionAttributes


class StringAttributes(FunctionAttributes):
    """llvmlite's function attributes plus ``strings``, printed as ``"key"="value"``."""

    def __init__(self, strings: dict[str, str]):
        super().__init__()
        self.strings = dict(strings)

    def __bool__(self) -> bool:  # llvmlite prints attributes only when the set is non-empty
        return bool(self.strings) or len(self) > 0

    def _to_list(self, ret_type):
        return super()._to_list(ret_type) + [f'"{k}"="{v}"' for k, v in self.strings.items()]


def add_strings(fn: ll.Function, strings: dict[str, str]) -> None:
    """Give ``fn`` the string attributes ``strings`` besides those it has, keyword ones included."""
    old = fn.attributes
    attrs = StringAttributes({**getattr(old, "strings", {}), **strings})
    for name in old:
        attrs.add(name)
    fn.attributes = attrs

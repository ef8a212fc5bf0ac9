"""What a code object (HSACO) says about its kernels: the AMDGPU metadata note (``NT_AMDGPU_METADATA``,
msgpack), read with pyelftools and msgpack: registers, spills, LDS, wavefront and kernarg sizes."""

from __future__ import annotations

import io

import msgpack
from elftools.elf.elffile import ELFFile

#: the note's type and owner (LLVM's AMDGPU code object v3 and later)
NT_AMDGPU_METADATA, OWNER = 32, "AMDGPU"


def kernels(hsaco: bytes) -> list[dict]:
    """The ``amdhsa.kernels`` entries of the code object's metadata note."""
    elf = ELFFile(io.BytesIO(hsaco))
    for section in elf.iter_sections():
        if section.header.sh_type != "SHT_NOTE":
            continue
        for note in section.iter_notes():
            if note["n_name"] == OWNER and note["n_type"] in (NT_AMDGPU_METADATA, "NT_AMDGPU_METADATA"):
                desc = note["n_desc"]
                raw = desc if isinstance(desc, bytes) else (desc.encode("latin-1") if isinstance(desc, str) else
                                                            bytes(note["n_descdata"]))
                return list(msgpack.unpackb(raw, raw=False)["amdhsa.kernels"])
    raise ValueError("the code object has no AMDGPU metadata note")


def resources(hsaco: bytes, name: str) -> dict:
    """Compile metadata of kernel ``name``: ``vgprs``, ``sgprs``, ``spills`` (VGPRs and SGPRs
    spilled), ``lds`` (static group segment bytes), ``wavefront_size``, ``kernarg_size``, ``args``
    (each argument's offset and size), ``hidden_args`` (the kinds of the arguments the HIP runtime
    fills in itself: ``hidden_hostcall_buffer`` where the kernel prints)."""
    entry = next((k for k in kernels(hsaco) if k.get(".name") == name), None)
    if entry is None:
        raise ValueError(f"the code object has no kernel '{name}'")
    return {"vgprs": entry[".vgpr_count"], "sgprs": entry[".sgpr_count"],
            "spills": entry.get(".vgpr_spill_count", 0) + entry.get(".sgpr_spill_count", 0),
            "lds": entry[".group_segment_fixed_size"], "wavefront_size": entry[".wavefront_size"],
            "kernarg_size": entry[".kernarg_segment_size"],
            "args": [{"offset": a[".offset"], "size": a[".size"]} for a in entry.get(".args", [])
                     if not a[".value_kind"].startswith("hidden_")],
            "hidden_args": [a[".value_kind"] for a in entry.get(".args", []) if a[".value_kind"].startswith("hidden_")]}

"""The disk cache seen from processes: a second process reuses the first one's compilation, and a
corrupt entry is recompiled rather than trusted."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import tritium
    from tests.kernels.basic import add_kernel
    from tests.test_frontend_ir import FrontendOnly
    k = tritium.compile(add_kernel, signature="*fp32, *fp32, *fp32, i32", constants={{"BLOCK": 64}},
                        target=FrontendOnly())
    print("HIT" if k.cache_hit else "MISS", "make_range" in k.asm["tile-opt"])
""")


def run(tmp_path: Path) -> str:
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(tmp_path / "cache"))
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=root)], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def test_second_process_hits_the_cache(tmp_path):
    assert run(tmp_path) == "MISS True"
    assert run(tmp_path) == "HIT True"


def test_corrupt_entry_is_recompiled(tmp_path):
    assert run(tmp_path) == "MISS True"
    (entry,) = (tmp_path / "cache").rglob("*.tcache")
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert run(tmp_path) == "MISS True"
    assert run(tmp_path) == "HIT True"

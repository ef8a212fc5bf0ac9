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
    from tests.kernels.frontend_only import FrontendOnly
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


LAUNCH = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    from tritium import plugins
    from tests.kernels.basic import add_kernel
    dev = plugins.get_target().driver
    x = np.arange(100, dtype=np.float32)
    out = dev.to_device(np.zeros_like(x))
    k = add_kernel[(2,)](dev.to_device(x), dev.to_device(x), out, 100, BLOCK=64)
    assert (dev.to_host(out) == 2 * x).all()
    mlir = any(m in sys.modules for m in ("mlir.ir", "torch_mlir.ir"))
    print("HIT" if k.cache_hit else "MISS", "mlir" if mlir else "no-mlir")
""")


def test_second_process_launches_without_compiling(tmp_path, compiling_target):
    env = dict(os.environ, TRITIUM_CACHE_DIR=str(tmp_path / "cache"), TRITIUM_TARGET=compiling_target.name)
    root = str(Path(__file__).resolve().parents[1])
    outs = [subprocess.run([sys.executable, "-c", LAUNCH.format(root=root)], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert outs == ["MISS mlir", "HIT no-mlir"]  # a hit needs no MLIR bindings (~100 ms of imports)


def test_corrupt_entry_is_recompiled(tmp_path):
    assert run(tmp_path) == "MISS True"
    (entry,) = (tmp_path / "cache").rglob("*.tcache")
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert run(tmp_path) == "MISS True"
    assert run(tmp_path) == "HIT True"

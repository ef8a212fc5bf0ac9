"""Blocks as large as Triton allows run on the cpu: kernels keep their tiles on the stack, and the
launching (main) thread runs programs too, so its stack must grow as far as the helpers'."""

import os
import subprocess
import sys
import textwrap

KERNEL = textwrap.dedent('''
    import numpy as np
    import tritium
    import tritium.language as tl

    @tritium.jit
    def k(x, out, M: tl.constexpr):
        a = tl.load(x + tl.arange(0, M)[:, None] * 16 + tl.arange(0, 16)[None, :])
        c = tl.dot(a, tl.full((16, 16), 1.0, tl.float32), input_precision="ieee")
        tl.store(out + tl.arange(0, 16), tl.sum(c, 0))

    x = np.ones((65536, 16), np.float32)
    out = np.zeros(16, np.float32)
    k[(1,)](x, out, M=65536)
    print(out[0])
''')


def test_a_product_of_a_65536_row_block_runs_on_the_launching_thread(tmp_path):
    """``tl.dot`` of a [65536, 16] block: 4 MiB of accumulator, past an 8 MiB main stack with its
    operand (it crashed the process)."""
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TRITIUM_TARGET": "cpu"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert float(run.stdout.split()[-1]) == 65536 * 16


SORT = textwrap.dedent('''
    import sys
    import numpy as np
    import tritium
    import tritium.language as tl

    @tritium.jit
    def k(x, M: tl.constexpr):
        tl.store(x + tl.arange(0, M), tl.sort(tl.load(x + tl.arange(0, M))))

    x = np.random.default_rng(0).random(1024).astype(np.float32)
    want = np.sort(x)
    sys.setrecursionlimit(250)  # a sort network of 8192 elements nests past Python's default 1000
    k[(1,)](x, M=1024)
    print(np.array_equal(x, want))
''')


def test_a_sort_network_deeper_than_python_s_recursion_limit_compiles(tmp_path):
    """The code generator evaluates a sort's network recursively: a block of 8192 elements went past
    Python's recursion limit (an internal RecursionError); here 1024 elements under a limit of 250."""
    script = tmp_path / "sort.py"
    script.write_text(SORT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TRITIUM_TARGET": "cpu", "TRITIUM_CACHE_DISABLE": "1"})
    assert run.returncode == 0 and run.stdout.split()[-1] == "True", run.stderr[-2000:]

"""@jit helpers that kernels reach as module attributes (``helpers.ramp(x)``)."""

import tritium


@tritium.jit
def ramp(x):
    acc = 0
    for i in range(3):
        acc = x + i * 50  # an int32 loop variable: no wrap-around for an int8 x
    return acc

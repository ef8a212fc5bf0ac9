import triton
import tritium

print(triton.__version__, tritium.__version__, triton.jit is tritium.jit)

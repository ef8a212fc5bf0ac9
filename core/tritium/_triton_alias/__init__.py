"""The directory ``tritium run`` puts first on ``PYTHONPATH`` for the processes a program starts
(``subprocess``, ``multiprocessing``): its ``triton`` package hands ``import triton`` to tritium
there too (``as_triton``)."""

/* The native launch: pack a kernel's arguments and call a GPU driver's launch function, in one C
   call. CUDA's cuLaunchKernel and HIP's hipModuleLaunchKernel take the same parameters, so nvptx and
   amdgpu (and a vendor's target whose driver has that signature) share it.

   Built when the package is installed (never at run time). Through ctypes the same launch costs
   about 3 us more: ctypes converts eleven arguments, struct packs the parameters, and a shared
   buffer needs a lock. Here the parameters live on this call's stack. ``native_launch.py`` holds the
   pure-Python equivalent, used when this extension was not built.

   launch(entry, function, gx, gy, gz, block, shared, stream, codes, args) -> CUresult
     entry     the address of cuLaunchKernel, hipModuleLaunchKernel, or a stand-in with their signature
     function  the CUfunction (hipFunction_t); stream the CUstream (hipStream_t; 0: the default stream)
     codes     one byte per argument, how it fills its 8-byte slot:
               'Q' unsigned 64-bit (pointers), 'q' signed 64-bit, 'f' float32, 'd' float64,
               'e' float16, 'H' 16 bits given as an int (bfloat16); 'B' a bytes object passed as
               it is (a 128-byte TMA tensor map), not through a slot
     args      a tuple of the argument values
   The driver reads each parameter at its own width from the start of its slot (little-endian).
   The parameter array ends with a NULL entry, which the driver ignores and a recording stand-in
   uses to find the end. The GIL is released while the driver queues the launch. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_PARAMS 512

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned shared, void *stream, void **params, void **extra);

static int pack(char code, PyObject *value, uint64_t *slot) {
    *slot = 0;
    switch (code) {
    case 'Q': {  /* an int, or an object with __index__ (a DevicePointer) */
        PyObject *index = PyNumber_Index(value);
        if (index == NULL) return -1;
        unsigned long long v = PyLong_AsUnsignedLongLong(index);
        Py_DECREF(index);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        *slot = v;
        return 0;
    }
    case 'q': {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) return -1;
        memcpy(slot, &v, sizeof v);
        return 0;
    }
    case 'H': {
        unsigned long v = PyLong_AsUnsignedLong(value);
        if (v == (unsigned long)-1 && PyErr_Occurred()) return -1;
        if (v > 0xffff) {
            PyErr_SetString(PyExc_OverflowError, "a 16-bit parameter is out of range");
            return -1;
        }
        uint16_t h = (uint16_t)v;
        memcpy(slot, &h, sizeof h);
        return 0;
    }
    case 'f': case 'd': case 'e': {
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        if (code == 'd') {
            memcpy(slot, &v, sizeof v);
        } else if (code == 'f') {
            float f = (float)v;
            memcpy(slot, &f, sizeof f);
        } else if (PyFloat_Pack2(v, (char *)slot, 1) < 0) {
            return -1;
        }
        return 0;
    }
    }
    PyErr_Format(PyExc_ValueError, "unknown parameter code %c", code);
    return -1;
}

static PyObject *launch(PyObject *module, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 10) {
        PyErr_SetString(PyExc_TypeError,
                        "launch(entry, function, gx, gy, gz, block, shared, stream, codes, args)");
        return NULL;
    }
    void *entry = PyLong_AsVoidPtr(argv[0]);
    void *function = PyLong_AsVoidPtr(argv[1]);
    unsigned long dims[5];
    for (int i = 0; i < 5; i++) {
        dims[i] = PyLong_AsUnsignedLong(argv[2 + i]);
        if (dims[i] > 0xffffffffUL && !PyErr_Occurred())
            PyErr_SetString(PyExc_OverflowError, "a launch dimension does not fit 32 bits");
    }
    void *stream = PyLong_AsVoidPtr(argv[7]);
    if (PyErr_Occurred()) return NULL;
    if (entry == NULL) {
        PyErr_SetString(PyExc_ValueError, "no launch function to call");
        return NULL;
    }
    PyObject *codes = argv[8], *args = argv[9];
    if (!PyBytes_Check(codes) || !PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "codes must be bytes and args a tuple");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (PyBytes_GET_SIZE(codes) != n) {
        PyErr_Format(PyExc_ValueError, "%zd parameter codes for %zd arguments", PyBytes_GET_SIZE(codes), n);
        return NULL;
    }
    if (n > MAX_PARAMS) {
        PyErr_Format(PyExc_ValueError, "a kernel takes at most %d parameters, got %zd", MAX_PARAMS, n);
        return NULL;
    }
    uint64_t slots[MAX_PARAMS];
    void *params[MAX_PARAMS + 1];
    const char *code = PyBytes_AS_STRING(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyTuple_GET_ITEM(args, i);
        if (code[i] == 'B') {  /* the tuple keeps the bytes alive until the driver copied them */
            if (!PyBytes_Check(value)) {
                PyErr_SetString(PyExc_TypeError, "a 'B' parameter must be bytes");
                return NULL;
            }
            params[i] = PyBytes_AS_STRING(value);
            continue;
        }
        if (pack(code[i], value, &slots[i]) < 0) return NULL;
        params[i] = &slots[i];
    }
    params[n] = NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = ((launch_fn)entry)(function, (unsigned)dims[0], (unsigned)dims[1], (unsigned)dims[2],
                             (unsigned)dims[3], 1, 1, (unsigned)dims[4], stream, params, NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(entry, function, gx, gy, gz, block, shared, stream, codes, args) -> the driver's result"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_launch", NULL, -1, methods};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&module); }

"""The few aotrun C API calls a Python user would make through ctypes to run
a package on numpy arrays: open, create a runner, run into a preallocated
output. Used by the benchmark's Python-backend model (the path a user
without the aotrun backend would take) and for the direct aotrun baseline.
"""

import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


MODES = {"threaded": 0, "single_threaded": 1, "graph": 2}


class Runner:
    """One aotrun runner of the float32 package at `path` (one input, one
    output, batch dimension first)."""

    def __init__(self, libaotrun, path, mode="single_threaded", out_cols=64):
        lib = ctypes.CDLL(libaotrun)
        self.lib = lib
        lib.aotrun_status_message.restype = ctypes.c_char_p
        for name in ("aotrun_package_open", "aotrun_runner_options_create", "aotrun_runner_options_set_mode",
                     "aotrun_runner_create", "aotrun_runner_run"):
            getattr(lib, name).restype = ctypes.c_void_p
        self.pkg, opts, self.runner = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        self._ok(lib.aotrun_package_open(path.encode(), None, ctypes.byref(self.pkg)))
        self._ok(lib.aotrun_runner_options_create(ctypes.byref(opts)))
        self._ok(lib.aotrun_runner_options_set_mode(opts, MODES[mode]))
        self._ok(lib.aotrun_runner_create(self.pkg, opts, ctypes.byref(self.runner)))
        lib.aotrun_runner_options_free(opts)
        self.out_cols = out_cols

    def _ok(self, status):
        if status:
            msg = ctypes.cast(status, ctypes.c_void_p)
            text = self.lib.aotrun_status_message(msg).decode()
            self.lib.aotrun_status_free(msg)
            raise RuntimeError("aotrun: " + text)

    @staticmethod
    def _view(a, shape):
        return DLTensor(a.ctypes.data, DLDevice(1, 0), a.ndim, DLDataType(2, 32, 1), shape, None, 0)

    def __call__(self, x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        y = np.empty((x.shape[0], self.out_cols), dtype=np.float32)
        xs = (ctypes.c_int64 * 2)(*x.shape)
        ys = (ctypes.c_int64 * 2)(*y.shape)
        xin, yout = self._view(x, xs), self._view(y, ys)
        self._ok(self.lib.aotrun_runner_run(self.runner, ctypes.byref(xin), 1, ctypes.byref(yout), 1))
        return y

    def close(self):
        self.lib.aotrun_runner_destroy(self.runner)
        self.lib.aotrun_package_close(self.pkg)

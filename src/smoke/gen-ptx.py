#!/usr/bin/env python3
"""Regenerates src/smoke/kernels.ptx from kernels.cu with NVRTC (no GPU needed).

usage: gen-ptx.py PATH/TO/libnvrtc.so.12   (from the nvidia-cuda-nvrtc-cu12 wheel)

The PTX ISA version is lowered to 6.0 (CUDA 9.0) so drivers from R384 on,
R470 included, can JIT it; tests/it/real_layouts.rs assembles it with ptxas.
"""
import ctypes, pathlib, re, sys

here = pathlib.Path(__file__).resolve().parent
nvrtc = ctypes.CDLL(sys.argv[1])
src = (here / "kernels.cu").read_bytes()
prog = ctypes.c_void_p()
assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=compute_50", b"--fmad=true", b"-default-device"]
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
size = ctypes.c_size_t()
nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
nvrtc.nvrtcGetProgramLog(prog, log)
if rc != 0:
    sys.exit("nvrtc failed:\n" + log.value.decode())
nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
nvrtc.nvrtcGetPTX(prog, ptx)
text = ptx.value.decode()
text = re.sub(r"^\.version \d+\.\d+$", ".version 6.0", text, count=1, flags=re.M)
(here / "kernels.ptx").write_text(text)
print("wrote", here / "kernels.ptx")

#!/usr/bin/env python3
"""tests/nvcc/run_cccl.py: CUDA programs using NVIDIA's C++ libraries (CCCL),
built by nvcc at test time and run unmodified under `ptxwave run --backend
emu`:

  - thrust.cu: thrust::transform, thrust::reduce, thrust::sort.  CCCL 3.0's
    transform kernel uses `prefetch.global.L2`, which once made the whole
    module fail to load (issue 20).
  - pipeline.cu: cuda::barrier, cuda::memcpy_async and cuda::pipeline
    (mbarrier.init/arrive/test_wait/try_wait with and without .parity,
    cp.async and cp.async.mbarrier.arrive), built for sm_80 and sm_90
    (run with PTXWAVE_CC=9.0: its PTX is then the one picked).
  - thrust_scan.cu: thrust::inclusive_scan / exclusive_scan built for
    sm_100 PTX only (compute_100).  With PTXWAVE_CCCL_SRC naming a CCCL
    checkout (3.1 or later: its sm_100 scan steals tiles with
    clusterlaunchcontrol.try_cancel / query_cancel, synchronises with
    barrier.cluster and stores with cp.async.bulk .cp_mask; the toolkit's
    CCCL 3.0 does not), it is built a second time against that checkout and
    run unlowered and lowered for gfx942 and gfx1100 (PTXWAVE_EMU_LOWER).

Each program checks its results against plain host C and prints
"NAME: PASS".  Exits 77 (skipped) when the CUDA toolkit is absent.
"""
import os
import subprocess
import sys
import tempfile

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
NVCC = os.path.join(CUDA, "bin", "nvcc")
PTXWAVE = os.environ.get("PTXWAVE")
SRC = os.path.join(os.environ.get("PTXWAVE_SOURCE_ROOT", "."), "tests", "nvcc")

# (source, sm, environment for the run, gencode (None: sm_XX and compute_XX),
#  extra nvcc flags)
PROGRAMS = [
    ("thrust", "80", {}, None, []),
    ("pipeline", "80", {}, None, []),
    ("pipeline", "90", {"PTXWAVE_CC": "9.0"}, None, []),
    ("thrust_scan", "100", {}, "arch=compute_100,code=compute_100", []),
]
CCCL_SRC = os.environ.get("PTXWAVE_CCCL_SRC")
if CCCL_SRC:
    inc = ["-I", os.path.join(CCCL_SRC, "thrust"), "-I", os.path.join(CCCL_SRC, "cub"),
           "-I", os.path.join(CCCL_SRC, "libcudacxx", "include")]
    for lower in (None, "gfx942", "gfx1100"):
        env = {"PTXWAVE_EMU_LOWER": lower} if lower else {}
        PROGRAMS.append(("thrust_scan", "100", env, "arch=compute_100,code=compute_100", inc))


def main():
    if not os.path.exists(NVCC):
        print(f"skipped: no nvcc at {NVCC}")
        return 77
    if not PTXWAVE:
        print("PTXWAVE is not set")
        return 1
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        built = {}
        for name, sm, extra, gencode, flags in PROGRAMS:
            key = (name, sm, gencode, tuple(flags))
            exe = os.path.join(tmp, f"{name}_sm{sm}_{len(built)}")
            if key in built:
                exe = built[key]
            else:
                gencode = gencode or f"arch=compute_{sm},code=[sm_{sm},compute_{sm}]"
                b = subprocess.run([NVCC, "-gencode", gencode] + flags + [os.path.join(SRC, name + ".cu"), "-o", exe],
                                   capture_output=True, text=True)
                if b.returncode != 0:
                    print(f"nvcc failed for {name} (sm_{sm}):\n{b.stdout}{b.stderr}")
                    return 1
                built[key] = exe
            env = dict(os.environ, PTXWAVE_CACHE_DIR=os.path.join(tmp, "cache"), **extra)
            r = subprocess.run([PTXWAVE, "run", "--backend", "emu", "--", exe], capture_output=True,
                               text=True, env=env, timeout=600)
            ok = r.returncode == 0 and f"{name}: PASS" in r.stdout
            what = f"{name} sm_{sm}" + (" (CCCL_SRC)" if flags else "") + \
                (f" lowered for {extra['PTXWAVE_EMU_LOWER']}" if "PTXWAVE_EMU_LOWER" in extra else "")
            print(f"{what}: {'ok' if ok else 'FAIL'}")
            if not ok:
                fails.append(name)
                print(r.stdout[-3000:], r.stderr[-3000:])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""scripts/ptxas_sink_study.py [PTXWAVE]: where ptxas 13 accepts the sink
symbol `_` as a result, and whether ptxwave's front end agrees
(ptx/ptx_sink.def).  One tiny module per instruction family and result
position (the whole result, `_|p`, `d|_`, vector elements), assembled with
ptxas -arch=sm_100a and parsed with `ptxwave parse`; prints each form's two
verdicts and ptxas's message, and exits 1 on a disagreement.
"""
import os
import subprocess
import sys
import tempfile

PTXAS = os.path.join(os.environ.get("PW_CUDA_DIR", "/usr/local/cuda"), "bin", "ptxas")
PW = sys.argv[1] if len(sys.argv) > 1 else "build/tools/ptxwave"

FORMS = {
 "add": "add.u32 _, %r1, %r2;",
 "add.f32": "add.f32 _, %f1, %f2;",
 "add.cc": "add.cc.u32 _, %r1, %r2;",
 "sub": "sub.s32 _, %r1, %r2;",
 "mul": "mul.lo.u32 _, %r1, %r2;",
 "mad": "mad.lo.u32 _, %r1, %r2, %r3;",
 "div": "div.u32 _, %r1, %r2;",
 "abs": "abs.s32 _, %r1;",
 "min": "min.u32 _, %r1, %r2;",
 "popc": "popc.b32 _, %r1;",
 "and": "and.b32 _, %r1, %r2;",
 "not": "not.b32 _, %r1;",
 "lop3": "lop3.b32 _, %r1, %r2, %r3, 0x96;",
 "shl": "shl.b32 _, %r1, 2;",
 "prmt": "prmt.b32 _, %r1, %r2, 0x3210;",
 "bfe": "bfe.u32 _, %r1, 2, 3;",
 "mov": "mov.u32 _, %r1;",
 "cvt": "cvt.u64.u32 _, %r1;",
 "cvt.f": "cvt.rn.f32.s32 _, %r1;",
 "cvta": "cvta.global.u64 _, %rd1;",
 "selp": "selp.u32 _, %r1, %r2, %p1;",
 "set": "set.eq.u32.u32 _, %r1, %r2;",
 "setp": "setp.eq.u32 _, %r1, %r2;",
 "setp_pq": "setp.eq.u32 %p2|_, %r1, %r2;",
 "setp__q": "setp.eq.u32 _|%p2, %r1, %r2;",
 "fma": "fma.rn.f32 _, %f1, %f2, %f3;",
 "rcp": "rcp.approx.f32 _, %f1;",
 "sqrt": "sqrt.rn.f32 _, %f1;",
 "ex2": "ex2.approx.f32 _, %f1;",
 "testp": "testp.finite.f32 _, %f1;",
 "ld": "ld.global.u32 _, [%rd1];",
 "ld.volatile": "ld.volatile.global.u32 _, [%rd1];",
 "ld.v2": "ld.global.v2.u32 {_, %r3}, [%rd1];",
 "ld.v2both": "ld.global.v2.u32 {%r3, _}, [%rd1];",
 "ldu": "ldu.global.u32 _, [%rd1];",
 "atom": "atom.global.add.u32 _, [%rd1], 1;",
 "atom.cas": "atom.global.cas.b32 _, [%rd1], 1, 2;",
 "atom.exch": "atom.global.exch.b32 _, [%rd1], 1;",
 "shfl": "shfl.sync.idx.b32 _, %r1, 0, 31, -1;",
 "shfl_dp": "shfl.sync.idx.b32 %r3|_, %r1, 0, 31, -1;",
 "shfl__p": "shfl.sync.idx.b32 _|%p2, %r1, 0, 31, -1;",
 "vote": "vote.sync.ballot.b32 _, %p1, -1;",
 "vote.all": "vote.sync.all.pred _, %p1, -1;",
 "match": "match.any.sync.b32 _, %r1, -1;",
 "match_dp": "match.all.sync.b32 %r3|_, %r1, -1;",
 "match__p": "match.all.sync.b32 _|%p2, %r1, -1;",
 "activemask": "activemask.b32 _;",
 "redux": "redux.sync.add.u32 _, %r1, -1;",
 "elect__p": "elect.sync _|%p2, -1;",
 "dp4a": "dp4a.u32.u32 _, %r1, %r2, %r3;",
 "isspacep": "isspacep.global _, %rd1;",
 "createpolicy": "createpolicy.fractional.L2::evict_last.b64 _, 1.0;",
 "clz": "clz.b32 _, %r1;",
 "brev": "brev.b32 _, %r1;",
 "bfind": "bfind.u32 _, %r1;",
 "shf": "shf.l.wrap.b32 _, %r1, %r2, %r3;",
 "slct": "slct.u32.s32 _, %r1, %r2, %r3;",
 "copysign": "copysign.f32 _, %f1, %f2;",
 "tanh": "tanh.approx.f32 _, %f1;",
 "neg": "neg.s32 _, %r1;",
 "rem": "rem.u32 _, %r1, %r2;",
 "sad": "sad.u32 _, %r1, %r2, %r3;",
 "mul24": "mul24.lo.u32 _, %r1, %r2;",
 "cnot": "cnot.b32 _, %r1;",
 "bmsk": "bmsk.clamp.b32 _, %r1, %r2;",
 "szext": "szext.clamp.s32 _, %r1, %r2;",
 "fns": "fns.b32 _, %r1, %r2, 1;",
 "cvt.pack": "cvt.pack.sat.u8.s32.b32 _, %r1, %r2, %r3;",
 "mov.pack": "mov.b64 _, {%r1, %r2};",
 "mov.unpack": "mov.b64 {_, %r3}, %rd1;",
 "mov.sreg": "mov.u32 _, %tid.x;",
 "vadd": "vadd.u32.u32.u32 _, %r1, %r2;",
 "vadd2": "vadd2.u32.u32.u32 _, %r1, %r2, %r3;",
 "tex": "tex.1d.v4.f32.s32 {_, %f2, %f3, %f4}, [%rd1, {%r1}];",
 "suld": "suld.b.1d.b32.trap {_}, [%rd1, {%r1}];",
 "mbarrier.arrive": "mbarrier.arrive.shared.b64 _, [%rd1];",
 "mbarrier.test_wait": "mbarrier.test_wait.shared.b64 _, [%rd1], %rd2;",
 "ldmatrix": "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {_}, [%rd1];",
 "min.f": "min.f32 _, %f1, %f2;",
 "addc": "addc.u32 _, %r1, %r2;",
 "madc": "madc.lo.u32 _, %r1, %r2, %r3;",
 "mapa": "mapa.u64 _, %rd1, %r1;",
 "getctarank": "getctarank.u64 _, %rd1;",
 "cvt.f16x2": "cvt.rn.f16x2.f32 _, %f1, %f2;",
 "mma": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {_, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r1, %r2}, {%f1, %f2, %f3, %f4};",

 "mbarrier.arrive_drop": "mbarrier.arrive_drop.shared.b64 _, [%rd1];",
 "mbarrier.arrive.expect_tx": "mbarrier.arrive.expect_tx.shared.b64 _, [%rd1], 16;",
 "mbarrier.try_wait": "mbarrier.try_wait.shared.b64 _, [%rd1], %rd2;",
 "mbarrier.pending_count": "mbarrier.pending_count.b64 _, %rd1;",
 "atom.shared": "atom.shared.add.u32 _, [%rd1], 1;",
 "atom.f32": "atom.global.add.f32 _, [%rd1], %f1;",
 "atom.v2": "atom.global.v2.f32.add {_, %f2}, [%rd1], {%f1, %f2};",
 "atom.v2all": "atom.global.v2.f32.add {_, _}, [%rd1], {%f1, %f2};",
 "ld.v2all": "ld.global.v2.u32 {_, _}, [%rd1];",
 "ldmatrix.x2": "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {_, %r1}, [%rd1];",
 "suld.v2": "suld.b.1d.v2.b32.trap {_, %r2}, [%rd1, {%r1}];",
 "tex.pred": "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}|_, [%rd1, {%r1}];",
 "shfl.up": "shfl.sync.up.b32 _, %r1, 1, 0, -1;",
 "vote.any": "vote.sync.any.pred _, %p1, -1;",
 "multimem": "multimem.ld_reduce.global.add.u32 _, [%rd1];",
 "cvt.rs": "cvt.rs.f16x2.f32 _, %f1, %f2, %r1;",
 "mov.pred": "mov.pred _, %p1;",
 "cvt.x4": "cvt.rs.satfinite.e4m3x4.f32 _, {%f1, %f2, %f3, %f4}, %r1;",
 "add.cc_pair": "add.cc.u32 _, %r1, %r2;",
 "mov.v2": "mov.v2.u32 {_, %r3}, {%r1, %r2};",
 "unpack.all": "mov.b64 {_, _}, %rd1;",
 "setp_all": "setp.eq.u32 _|_, %r1, %r2;",
 "call": "call.uni _, f, ();",
 "query_cancel": "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 _, %rd1;",
 "red": "red.global.add.u32 [%rd1], 1;",
 "testp.normal": "testp.normal.f32 _, %f1;",
 "mapa.cluster": "mapa.shared::cluster.u32 _, %r1, %r2;",
 "elect_dp": "elect.sync %r1|%p1, -1;",
 "wmma.load": "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {_, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];",
 "prefetch": "prefetch.global.L2 [%rd1];",
}

HDR = (".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<8>;\n"
       " .reg .b64 %rd<8>;\n .reg .f32 %f<8>;\n .reg .pred %p<4>;\n")


def main():
    diffs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, stmt in FORMS.items():
            fn = os.path.join(tmp, "t.ptx")
            with open(fn, "w") as f:
                f.write(HDR + " " + stmt + "\n ret;\n}\n")
            r = subprocess.run([PTXAS, "-arch=sm_100a", fn, "-o", "/dev/null"], capture_output=True, text=True)
            q = subprocess.run([PW, "parse", fn], capture_output=True, text=True)
            pa, pw = r.returncode == 0, q.returncode == 0
            msg = [l for l in r.stderr.splitlines() if "error" in l or ("fatal" in l and "aborted" not in l)]
            diffs += pa != pw
            print(f"{name:24s} ptxas {'accept' if pa else 'REJECT'}  ptxwave {'accept' if pw else 'REJECT'}"
                  f"{'' if pa == pw else '  <-- differ'}  {msg[0].split(':', 2)[-1].strip()[:70] if msg else ''}")
    print(f"{len(FORMS)} forms, {diffs} disagreements")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

/* benchmarks/native/include/pw_half_ops.h: the operations cuda_fp16.h and
 * cuda_bf16.h share, for one 16-bit type H and its pair H2 (clang vector of
 * two, so that pair operations are the packed v_pk_* instructions a native
 * compile uses).  Included twice with PW_H / PW_H2 defined; CUDA semantics
 * (CUDA Math API, "Half Precision Intrinsics"):
 *   __hadd/__hsub/__hmul: round to nearest, never contracted into an fma;
 *   __hmin/__hmax: a NaN operand yields the other (minNum), the _nan forms
 *   propagate NaN; __hadd_sat clamps to [0, 1] (NaN -> 0); __hfma_relu
 *   clamps negative results to 0 and keeps NaN; __heq ... ordered,
 *   __hequ ... unordered; __hisinf: -1, 0 or 1. */
PW_UNCONTRACTED_OPS(PW_H, __hadd, __hsub, __hmul)
PW_DI PW_H __hfma(PW_H a, PW_H b, PW_H c) { return __builtin_elementwise_fma(a, b, c); }
PW_DI PW_H __hneg(PW_H a) { return -a; }
PW_DI PW_H __habs(PW_H a) { return __builtin_elementwise_abs(a); }
PW_DI PW_H __hmin(PW_H a, PW_H b) { return __builtin_elementwise_minnum(a, b); }
PW_DI PW_H __hmax(PW_H a, PW_H b) { return __builtin_elementwise_maxnum(a, b); }
PW_DI PW_H __hmin_nan(PW_H a, PW_H b) { return __builtin_elementwise_minimum(a, b); }
PW_DI PW_H __hmax_nan(PW_H a, PW_H b) { return __builtin_elementwise_maximum(a, b); }
PW_DI PW_H __hadd_sat(PW_H a, PW_H b) {
  return __builtin_elementwise_minnum(__builtin_elementwise_maxnum(__hadd(a, b), (PW_H)0.0f), (PW_H)1.0f);
}
PW_DI PW_H __hfma_relu(PW_H a, PW_H b, PW_H c) {
  PW_H r = __hfma(a, b, c);
  return r < (PW_H)0.0f ? (PW_H)0.0f : r;
}
PW_DI bool __heq(PW_H a, PW_H b) { return a == b; }
PW_DI bool __hne(PW_H a, PW_H b) { return a < b || a > b; }
PW_DI bool __hlt(PW_H a, PW_H b) { return a < b; }
PW_DI bool __hle(PW_H a, PW_H b) { return a <= b; }
PW_DI bool __hgt(PW_H a, PW_H b) { return a > b; }
PW_DI bool __hge(PW_H a, PW_H b) { return a >= b; }
PW_DI bool __hequ(PW_H a, PW_H b) { return !(a < b || a > b); }
PW_DI bool __hneu(PW_H a, PW_H b) { return a != b; }
PW_DI bool __hltu(PW_H a, PW_H b) { return !(a >= b); }
PW_DI bool __hleu(PW_H a, PW_H b) { return !(a > b); }
PW_DI bool __hgtu(PW_H a, PW_H b) { return !(a <= b); }
PW_DI bool __hgeu(PW_H a, PW_H b) { return !(a < b); }
PW_DI bool __hisnan(PW_H a) { return a != a; }
PW_DI int __hisinf(PW_H a) { return __builtin_isinf((float)a) ? (a < (PW_H)0.0f ? -1 : 1) : 0; }
PW_UNCONTRACTED_OPS(PW_H2, __hadd2, __hsub2, __hmul2)
PW_DI PW_H2 __hfma2(PW_H2 a, PW_H2 b, PW_H2 c) { return __builtin_elementwise_fma(a, b, c); }
PW_DI PW_H2 __hmax2(PW_H2 a, PW_H2 b) { return __builtin_elementwise_maxnum(a, b); }
PW_DI PW_H2 __hmin2(PW_H2 a, PW_H2 b) { return __builtin_elementwise_minnum(a, b); }
PW_DI PW_H2 __hneg2(PW_H2 a) { return -a; }

/* lower/lower_multimem.c: multimem.ld_reduce, multimem.st and multimem.red
 * (PTX ISA 9.7.9.13 "Data Movement and Conversion Instructions: multimem")
 * on a runtime of one device (docs/lowering.md, "multimem").
 *
 * A multimem address names a multicast object: one address that stands for
 * one copy of the data on each device bound to the object (cuMulticast*).
 * The ISA defines the three instructions over those copies:
 *
 *   multimem.ld_reduce  d, [a]   d = op over the copies of [a] (all devices)
 *   multimem.st         [a], b   b stored to every copy
 *   multimem.red        [a], b   red.op on every copy
 *
 * ptxwave's runtime is one device and reports
 * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 0 (runtime/rt_device.c), so no
 * multicast object can ever bind more than one device: a multimem address
 * names exactly one copy, in this device's global memory.  Then
 *
 *   multimem.ld_reduce.sem.scope.ss.op.T   -> ld.sem.scope.ss.T
 *       a reduction over one value is that value, for every .op (.add .min
 *       .max .and .or .xor); .acc::f32 only widens the accumulator of an
 *       f16/bf16 reduction, and a sum of one term is exact, so the result
 *       is the loaded value again; .weak stays weak, .relaxed/.acquire and
 *       the scope carry over (codegen and the emulator order ld as ld).
 *   multimem.st.sem.scope.ss.T            -> st.sem.scope.ss.T
 *   multimem.red.sem.scope.ss.op.T        -> red.sem.scope.ss.op.T
 *       one red per element for .v2/.v4/.v8 (element k at offset k * size
 *       of T): the ISA performs a vector multimem.red element by element
 *       anyway, and red has no vector form on every type.
 * Vector loads and stores keep their vector width (.v2 .v4 .v8); 16-bit
 * and packed float types move as the bit type of their size (.bf16x2 as
 * .b32: move_type), red keeps the type its arithmetic needs.
 * A vector .acquire load becomes a .relaxed one then fence.acq_rel, a
 * vector .release store fence.acq_rel then a .relaxed store (the fence
 * patterns of the memory model, 8.8): ld and st give ordering only to
 * scalar accesses, which they make atomic.
 *
 * A counterexample the single-device argument rests on: with two devices
 * bound, ld_reduce.add over copies {1, 2} is 3 and this pass would give
 * the local copy (1).  That cannot happen here, because the runtime never
 * binds a second device (there is none) and says so to the program.
 *
 * The pass runs before the others in lower_module() and also on its own
 * before the emulator loads unlowered IR (the runtime's emulator backend
 * and `ptxwave emulate`), so both backends see plain ld/st/red.
 */
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_multimem_ld_reduce || i->op == ir_op_multimem_st || i->op == ir_op_multimem_red;
}

/* Eliminates multimem.*.  Preserves nothing: the walker turns a guarded
 * instruction into a branch. */
const lower_contract lower_multimem_contract = {
    .pass = "lower_multimem",
    .ops = (const ir_op[]){ir_op_multimem_ld_reduce, ir_op_multimem_st, ir_op_multimem_red, ir_op_count},
    .preserves = 0,
};

/* The memory-order modifiers that carry over to ld/st/red: state space,
 * semantics and scope.  The reduction's own (.acc::f32 .approx .ftz) have
 * no meaning for one value and are not fields ld/st take. */
static ir_mods mem_mods(const ir_instr *i) {
  return (ir_mods){.space = i->mods.space, .sem = i->mods.sem, .scope = i->mods.scope};
}

/* The type ld/st move the data as: T itself for integers, bits and
 * f32/f64; the bit type of T's size for 16-bit and packed floats (f16,
 * bf16x2, e5m2x4 ...).  ld/st do not care about a float format (PTX ld
 * has no .bf16x2 at all), and codegen makes a scalar .relaxed/.acquire
 * access an LLVM atomic, which LLVM can select for integers and f32/f64
 * but not for <2 x bfloat> ("unsupported library call operation", a fatal
 * error, found on NCCL's modules). */
static ir_type move_type(ir_type t) {
  ir_type_kind k = ir_type_kind_of(t);
  unsigned bits = ir_type_bits(t);
  bool keep = k == IR_TK_UINT || k == IR_TK_SINT || k == IR_TK_BITS ||
              (k == IR_TK_FLOAT && (t == ir_type_f32 || t == ir_type_f64));
  if (keep) return t;
  switch (bits) {
  case 8: return ir_type_b8;
  case 16: return ir_type_b16;
  case 32: return ir_type_b32;
  case 64: return ir_type_b64;
  default: return t;
  }
}

static unsigned elem_bytes(ir_type t) {
  unsigned b = ir_type_bits(t) / 8;
  return b ? b : 1;
}

/* fence.acq_rel.scope (9.7.13.4): with a relaxed access after (before) it,
 * the release (acquire) pattern of the memory model (8.8): how a vector
 * access keeps .release/.acquire, since ld/st order only scalar accesses
 * as atomics (codegen's load/store). */
static void fence(ir_builder *b, const ir_instr *i) {
  ir_build(b, ir_op_fence, ir_type_none, 0, NULL, 0, NULL,
           &(ir_mods){.sem = IR_SEM_ACQ_REL, .scope = i->mods.scope ? i->mods.scope : IR_SCOPE_SYS});
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_multimem_options *opt = data;
  ir_type t = (ir_type)i->type;
  unsigned vec = i->mods.vec > 1 ? i->mods.vec : 1;
  ir_mods m = mem_mods(i);
  switch ((ir_op)i->op) {
  case ir_op_multimem_ld_reduce: {
    if (i->nsrc < 1 || i->ndst != vec) {
      lower_error(opt->diag, i, "multimem.ld_reduce with %u results for .v%u", i->ndst, vec);
      return false;
    }
    bool acquire = vec > 1 && m.sem == IR_SEM_ACQUIRE;
    if (vec > 1) m.vec = (uint8_t)vec;
    if (acquire) m.sem = IR_SEM_RELAXED;
    ir_instr *ld = ir_build_mem(b, ir_op_ld, move_type(t), i->src[0], i->offset, 0, NULL, vec, &m);
    if (acquire) fence(b, i);
    for (unsigned k = 0; k < vec; k++) out[k] = ld->dst[k];
    return true;
  }
  case ir_op_multimem_st: {
    if (i->nsrc != 1 + vec) {
      lower_error(opt->diag, i, "multimem.st with %u values for .v%u", i->nsrc - 1, vec);
      return false;
    }
    bool release = vec > 1 && m.sem == IR_SEM_RELEASE;
    if (vec > 1) m.vec = (uint8_t)vec;
    if (release) {
      m.sem = IR_SEM_RELAXED;
      fence(b, i);
    }
    ir_build_mem(b, ir_op_st, move_type(t), i->src[0], i->offset, vec, i->src + 1, 0, &m);
    return true;
  }
  case ir_op_multimem_red: {
    if (i->nsrc != 1 + vec) {
      lower_error(opt->diag, i, "multimem.red with %u values for .v%u", i->nsrc - 1, vec);
      return false;
    }
    m.atomop = i->mods.atomop;
    for (unsigned k = 0; k < vec; k++)
      ir_build_mem(b, ir_op_red, t, i->src[0], i->offset + (int64_t)(k * elem_bytes(t)), 1,
                   &i->src[1 + k], 0, &m);
    return true;
  }
  default:
    return false;
  }
}

bool lower_multimem(ir_module *m, const lower_multimem_options *opt) {
  lower_multimem_options o = opt ? *opt : (lower_multimem_options){0};
  return lower_walk(m, want, lower_instr, &o);
}

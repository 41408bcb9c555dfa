/* ptx/ptx_modifier.c: the modifier words of PTX instructions
 * (ptx_mods.def) and what each means for each op.
 *
 * A word's meaning depends on the op: ".lo" is mul's low half and setp's
 * unsigned less-than, ".b" is a wmma fragment, a tld4 component and
 * suld's raw mode.  The decoder sets ir_mods fields and the type suffixes;
 * a word it does not know for the op makes the instruction opaque.
 */
#include "ptx_instr.h"

/* ---- modifiers --------------------------------------------------------------- */

static ir_type mod_type(uint16_t m) {
  return m >= ptx_mod_type && m < ptx_mod_type + ir_type_count ? (ir_type)(m - ptx_mod_type) : ir_type_none;
}

static bool is_cmp_op(ir_op op) { return op == ir_op_setp || op == ir_op_set || op == ir_op_slct; }
static bool is_mul_op(ir_op op) {
  return op == ir_op_mul || op == ir_op_mad || op == ir_op_mul24 || op == ir_op_mad24 ||
         op == ir_op_madc;
}
static bool is_atomic_op(ir_op op) {
  return op == ir_op_atom || op == ir_op_red || op == ir_op_redux || op == ir_op_bar_red ||
         op == ir_op_multimem_ld_reduce || op == ir_op_multimem_red || op == ir_op_red_async ||
         op == ir_op_cp_reduce_async_bulk || op == ir_op_cp_reduce_async_bulk_tensor;
}

/* Gives each modifier its meaning for this op.  False if one is unknown
 * here (the instruction is then kept opaque). */
bool ptx_decode_mods(ptx_parser *p, ins *I) {
  ir_mods *m = &I->m;
  ir_op op = I->op;
  for (uint32_t i = 0; i < I->nmods; i++) {
    uint16_t md = I->mods[i];
    ir_type t = mod_type(md);
    if (t != ir_type_none) {
      if (I->ntypes == 0) I->type = t;
      else if (I->ntypes == 1) I->type2 = t;
      else if (I->ntypes == 2) I->type3 = t;
      else if (I->ntypes == 3) I->type4 = t;
      else return false;
      I->ntypes++;
      continue;
    }
    switch ((ptx_mod)md) {
    case ptx_mod_rn: m->rnd = IR_RND_RN; break;
    case ptx_mod_rz: m->rnd = IR_RND_RZ; break;
    case ptx_mod_rm: m->rnd = IR_RND_RM; break;
    case ptx_mod_rp: m->rnd = IR_RND_RP; break;
    case ptx_mod_rna: m->rnd = IR_RND_RNA; break;
    case ptx_mod_rs: m->rnd = IR_RND_RS; break;
    case ptx_mod_rni: m->rnd = IR_RND_RNI; break;
    case ptx_mod_rzi: m->rnd = IR_RND_RZI; break;
    case ptx_mod_rmi: m->rnd = IR_RND_RMI; break;
    case ptx_mod_rpi: m->rnd = IR_RND_RPI; break;
    case ptx_mod_ftz: m->ftz = 1; break;
    case ptx_mod_sat: m->sat = 1; break;
    case ptx_mod_approx: m->approx = 1; break;
    case ptx_mod_full: m->full = 1; break;
    case ptx_mod_satfinite: m->satfinite = 1; break;
    case ptx_mod_relu: m->relu = 1; break;
    case ptx_mod_NaN: m->nan = 1; break;
    case ptx_mod_noftz: m->noftz_f16 = 1; break;
    case ptx_mod_xorsign: m->xorsign = 1; break;
    case ptx_mod_abs: m->absmod = 1; break;
    case ptx_mod_eq: m->cmp = IR_CMP_EQ; break;
    case ptx_mod_ne: m->cmp = IR_CMP_NE; break;
    case ptx_mod_lt: m->cmp = IR_CMP_LT; break;
    case ptx_mod_le: m->cmp = IR_CMP_LE; break;
    case ptx_mod_gt: m->cmp = IR_CMP_GT; break;
    case ptx_mod_ge: m->cmp = IR_CMP_GE; break;
    case ptx_mod_ls: m->cmp = IR_CMP_LS; break;
    case ptx_mod_hs: m->cmp = IR_CMP_HS; break;
    case ptx_mod_equ: m->cmp = IR_CMP_EQU; break;
    case ptx_mod_neu: m->cmp = IR_CMP_NEU; break;
    case ptx_mod_ltu: m->cmp = IR_CMP_LTU; break;
    case ptx_mod_leu: m->cmp = IR_CMP_LEU; break;
    case ptx_mod_gtu: m->cmp = IR_CMP_GTU; break;
    case ptx_mod_geu: m->cmp = IR_CMP_GEU; break;
    case ptx_mod_num: m->cmp = IR_CMP_NUM; break;
    case ptx_mod_nan: m->cmp = IR_CMP_NAN; break;
    case ptx_mod_lo:
      if (is_cmp_op(op)) m->cmp = IR_CMP_LO;
      else if (is_mul_op(op)) m->mulmode = IR_MUL_LO;
      else if (op == ir_op_dp2a) m->dp_hi = 0;
      else return false;
      break;
    case ptx_mod_hi:
      if (is_cmp_op(op)) m->cmp = IR_CMP_HI;
      else if (is_mul_op(op)) m->mulmode = IR_MUL_HI;
      else if (op == ir_op_dp2a) m->dp_hi = 1;
      else return false;
      break;
    case ptx_mod_wide: m->mulmode = IR_MUL_WIDE; break;
    case ptx_mod_cc: m->cc = 1; break;
    case ptx_mod_and:
    case ptx_mod_or:
    case ptx_mod_xor:
      if (is_cmp_op(op))
        m->boolop = md == ptx_mod_and ? IR_BOOL_AND : md == ptx_mod_or ? IR_BOOL_OR : IR_BOOL_XOR;
      else if (is_atomic_op(op))
        m->atomop = md == ptx_mod_and ? IR_ATOM_AND : md == ptx_mod_or ? IR_ATOM_OR : IR_ATOM_XOR;
      else return false;
      break;
    case ptx_mod_add: m->atomop = IR_ATOM_ADD; break;
    case ptx_mod_min: m->atomop = IR_ATOM_MIN; break;
    case ptx_mod_max: m->atomop = IR_ATOM_MAX; break;
    case ptx_mod_inc: m->atomop = IR_ATOM_INC; break;
    case ptx_mod_dec: m->atomop = IR_ATOM_DEC; break;
    case ptx_mod_exch: m->atomop = IR_ATOM_EXCH; break;
    case ptx_mod_cas: m->atomop = IR_ATOM_CAS; break;
    case ptx_mod_popc: m->atomop = IR_ATOM_POPC; break;
    case ptx_mod_global:
    case ptx_mod_shared:
    case ptx_mod_shared_cta:
    case ptx_mod_shared_cluster:
    case ptx_mod_local:
    case ptx_mod_const:
    case ptx_mod_param:
    case ptx_mod_param_entry:
    case ptx_mod_param_func:
    case ptx_mod_texspace: {
      static const uint8_t sp[] = {
          [ptx_mod_global] = IR_SPACE_GLOBAL, [ptx_mod_shared] = IR_SPACE_SHARED,
          [ptx_mod_shared_cta] = IR_SPACE_SHARED_CTA, [ptx_mod_shared_cluster] = IR_SPACE_SHARED_CLUSTER,
          [ptx_mod_local] = IR_SPACE_LOCAL, [ptx_mod_const] = IR_SPACE_CONST,
          [ptx_mod_param] = IR_SPACE_PARAM, [ptx_mod_param_entry] = IR_SPACE_PARAM_ENTRY,
          [ptx_mod_param_func] = IR_SPACE_PARAM_FUNC, [ptx_mod_texspace] = IR_SPACE_TEX};
      /* fence.proxy.async.global / .shared::{cta,cluster} (9.7.13.4): the
       * space names the async proxy's state space */
      if (op == ir_op_fence && m->proxy == IR_PROXY_ASYNC &&
          (md == ptx_mod_global || md == ptx_mod_shared_cta || md == ptx_mod_shared_cluster)) {
        m->proxy = md == ptx_mod_global ? IR_PROXY_ASYNC_GLOBAL
                   : md == ptx_mod_shared_cta ? IR_PROXY_ASYNC_SHARED_CTA : IR_PROXY_ASYNC_SHARED_CLUSTER;
        break;
      }
      /* cp.async.bulk: global <-> shared only (the shared::cta ->
       * shared::cluster copy would need the source's space: kept opaque) */
      if (m->space && op == ir_op_cp_async_bulk && (m->space == IR_SPACE_GLOBAL) == (md == ptx_mod_global))
        return false;
      /* Copies name the destination's space first (cp.async.shared.global):
       * the first is kept; the source's follows from the op. */
      if (m->space && (op == ir_op_cp_async || op == ir_op_cp_async_bulk ||
                       op == ir_op_cp_async_bulk_tensor || op == ir_op_cp_reduce_async_bulk ||
                       op == ir_op_cp_reduce_async_bulk_tensor))
        break;
      m->space = sp[md];
      break;
    }
    case ptx_mod_weak: m->sem = IR_SEM_WEAK; break;
    case ptx_mod_volatile: m->sem = IR_SEM_VOLATILE; break;
    case ptx_mod_relaxed: m->sem = IR_SEM_RELAXED; break;
    case ptx_mod_acquire: m->sem = IR_SEM_ACQUIRE; break;
    case ptx_mod_release: m->sem = IR_SEM_RELEASE; break;
    case ptx_mod_acq_rel: m->sem = IR_SEM_ACQ_REL; break;
    case ptx_mod_sc: m->sem = IR_SEM_SC; break;
    case ptx_mod_mmio: m->sem = IR_SEM_MMIO; break;
    case ptx_mod_cta: m->scope = IR_SCOPE_CTA; break;
    case ptx_mod_cluster: m->scope = IR_SCOPE_CLUSTER; break;
    case ptx_mod_gpu: m->scope = IR_SCOPE_GPU; break;
    case ptx_mod_sys: m->scope = IR_SCOPE_SYS; break;
    case ptx_mod_gl: /* membar.gl is membar at GPU scope (9.7.13.4) */
      if (op != ir_op_membar) return false;
      m->scope = IR_SCOPE_GPU;
      break;
    case ptx_mod_ca: m->cache = IR_CACHE_CA; break;
    case ptx_mod_cg: m->cache = IR_CACHE_CG; break;
    case ptx_mod_cs: m->cache = IR_CACHE_CS; break;
    case ptx_mod_lu: m->cache = IR_CACHE_LU; break;
    case ptx_mod_cv: m->cache = IR_CACHE_CV; break;
    case ptx_mod_wb: m->cache = IR_CACHE_WB; break;
    case ptx_mod_wt: m->cache = IR_CACHE_WT; break;
    case ptx_mod_nc: m->nc = 1; break;
    case ptx_mod_L1_evict_normal: m->l1evict = IR_EVICT_NORMAL; break;
    case ptx_mod_L1_evict_unchanged: m->l1evict = IR_EVICT_UNCHANGED; break;
    case ptx_mod_L1_evict_first: m->l1evict = IR_EVICT_FIRST; break;
    case ptx_mod_L1_evict_last: m->l1evict = IR_EVICT_LAST; break;
    case ptx_mod_L1_no_allocate: m->l1evict = IR_EVICT_NO_ALLOCATE; break;
    case ptx_mod_L2_evict_normal: m->l2evict = IR_EVICT_NORMAL; break;
    case ptx_mod_L2_evict_unchanged:
    case ptx_mod_L2_evict_first: {
      /* createpolicy.L2::primary{.L2::secondary}: the second one is the
       * secondary priority (9.7.9.16) */
      uint8_t e = md == ptx_mod_L2_evict_first ? IR_EVICT_FIRST : IR_EVICT_UNCHANGED;
      if (op == ir_op_createpolicy && m->l2evict) m->l2evict2 = e;
      else m->l2evict = e;
      break;
    }
    case ptx_mod_L2_evict_last: m->l2evict = IR_EVICT_LAST; break;
    case ptx_mod_L2_64B: m->l2prefetch = 1; break;
    case ptx_mod_L2_128B: m->l2prefetch = 2; break;
    case ptx_mod_L2_256B: m->l2prefetch = 4; break;
    case ptx_mod_L2_cache_hint: m->has_cache_hint = 1; break;
    case ptx_mod_v2: m->vec = 2; break;
    case ptx_mod_v4: m->vec = 4; break;
    case ptx_mod_v8: m->vec = 8; break;
    case ptx_mod_sync: m->sync = 1; break;
    case ptx_mod_aligned: m->aligned = 1; break;
    case ptx_mod_uni:
      if (op == ir_op_vote) m->vote = IR_VOTE_UNI;
      else m->uni = 1;
      break;
    case ptx_mod_arrive: m->barmode = IR_BAR_ARRIVE; break;
    case ptx_mod_red:
      /* bar.red is its own op; the word names it */
      if (op != ir_op_bar_red) return false;
      break;
    case ptx_mod_wait:
      if (op == ir_op_griddepcontrol) m->gdc = IR_GDC_WAIT;
      else if (op == ir_op_bar || op == ir_op_barrier_cluster) m->barmode = IR_BAR_WAIT;
      else return false;
      break;
    case ptx_mod_up: m->shfl = IR_SHFL_UP; break;
    case ptx_mod_down: m->shfl = IR_SHFL_DOWN; break;
    case ptx_mod_bfly: m->shfl = IR_SHFL_BFLY; break;
    case ptx_mod_idx:
      if (op != ir_op_shfl) return false;
      m->shfl = IR_SHFL_IDX;
      break;
    case ptx_mod_all:
      if (op == ir_op_vote) m->vote = IR_VOTE_ALL;
      else if (op == ir_op_match) m->match = IR_MATCH_ALL;
      else return false;
      break;
    case ptx_mod_any:
      if (op == ir_op_vote) m->vote = IR_VOTE_ANY;
      else if (op == ir_op_match) m->match = IR_MATCH_ANY;
      else return false;
      break;
    case ptx_mod_ballot:
      if (op != ir_op_vote) return false;
      m->vote = IR_VOTE_BALLOT;
      break;
    case ptx_mod_to: m->cvta_to = 1; break;
    case ptx_mod_shiftamt: m->bfind_shiftamt = 1; break;
    case ptx_mod_f4e: m->prmt = IR_PRMT_F4E; break;
    case ptx_mod_b4e: m->prmt = IR_PRMT_B4E; break;
    case ptx_mod_rc8: m->prmt = IR_PRMT_RC8; break;
    case ptx_mod_ecl: m->prmt = IR_PRMT_ECL; break;
    case ptx_mod_ecr: m->prmt = IR_PRMT_ECR; break;
    case ptx_mod_rc16: m->prmt = IR_PRMT_RC16; break;
    case ptx_mod_finite: m->testp = IR_TESTP_FINITE; break;
    case ptx_mod_infinite: m->testp = IR_TESTP_INFINITE; break;
    case ptx_mod_number: m->testp = IR_TESTP_NUMBER; break;
    case ptx_mod_notanumber: m->testp = IR_TESTP_NOTANUMBER; break;
    case ptx_mod_normal: m->testp = IR_TESTP_NORMAL; break;
    case ptx_mod_subnormal: m->testp = IR_TESTP_SUBNORMAL; break;
    case ptx_mod_l:
      if (op != ir_op_shf) return false;
      m->shf_left = 1;
      break;
    case ptx_mod_r:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_R;
      else if (op == ir_op_shf) m->shf_left = 0;
      else return false;
      break;
    case ptx_mod_g:
      if (op != ir_op_tld4) return false;
      m->texcomp = IR_TEXCOMP_G;
      break;
    case ptx_mod_a:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_A;
      else if (op == ir_op_wmma_load || op == ir_op_wmma_store) m->frag = IR_FRAG_A;
      else return false;
      break;
    case ptx_mod_b:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_B;
      else if (op == ir_op_wmma_load || op == ir_op_wmma_store) m->frag = IR_FRAG_B;
      else if (op == ir_op_suld || op == ir_op_sust || op == ir_op_sured) m->surfmode = IR_SURF_B;
      else return false;
      break;
    case ptx_mod_p:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->surfmode = IR_SURF_P;
      break;
    case ptx_mod_c:
      if (op != ir_op_wmma_load && op != ir_op_wmma_store) return false;
      m->frag = IR_FRAG_C;
      break;
    case ptx_mod_d:
      if (op != ir_op_wmma_load && op != ir_op_wmma_store) return false;
      m->frag = IR_FRAG_D;
      break;
    case ptx_mod_clamp:
      if (op == ir_op_shf || op == ir_op_vshl || op == ir_op_vshr || op == ir_op_bmsk ||
          op == ir_op_szext)
        m->shf_clamp = 1;
      else if (op == ir_op_suld || op == ir_op_sust || op == ir_op_sured) m->clampmode = IR_CLAMP_CLAMP;
      else return false;
      break;
    case ptx_mod_wrap:
      if (op != ir_op_shf && op != ir_op_vshl && op != ir_op_vshr && op != ir_op_bmsk &&
          op != ir_op_szext)
        return false;
      m->shf_clamp = 0;
      break;
    case ptx_mod_trap:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->clampmode = IR_CLAMP_TRAP;
      break;
    case ptx_mod_zero:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->clampmode = IR_CLAMP_ZERO;
      break;
    case ptx_mod_g1d: m->geom = IR_GEOM_1D; break;
    case ptx_mod_g2d: m->geom = IR_GEOM_2D; break;
    case ptx_mod_g3d: m->geom = IR_GEOM_3D; break;
    case ptx_mod_a1d: m->geom = IR_GEOM_A1D; break;
    case ptx_mod_a2d: m->geom = IR_GEOM_A2D; break;
    case ptx_mod_cube: m->geom = IR_GEOM_CUBE; break;
    case ptx_mod_acube: m->geom = IR_GEOM_ACUBE; break;
    case ptx_mod_g2dms: m->geom = IR_GEOM_2DMS; break;
    case ptx_mod_a2dms: m->geom = IR_GEOM_A2DMS; break;
    case ptx_mod_base: m->texlod = IR_TEXLOD_BASE; break;
    case ptx_mod_level: m->texlod = IR_TEXLOD_LEVEL; break;
    case ptx_mod_grad: m->texlod = IR_TEXLOD_GRAD; break;
    case ptx_mod_width: m->query = IR_QUERY_WIDTH; break;
    case ptx_mod_height: m->query = IR_QUERY_HEIGHT; break;
    case ptx_mod_depth: m->query = IR_QUERY_DEPTH; break;
    case ptx_mod_channel_data_type: m->query = IR_QUERY_CHANNEL_DATA_TYPE; break;
    case ptx_mod_channel_order: m->query = IR_QUERY_CHANNEL_ORDER; break;
    case ptx_mod_normalized_coords: m->query = IR_QUERY_NORMALIZED_COORDS; break;
    case ptx_mod_filter_mode: m->query = IR_QUERY_FILTER_MODE; break;
    case ptx_mod_addr_mode_0: m->query = IR_QUERY_ADDR_MODE_0; break;
    case ptx_mod_addr_mode_1: m->query = IR_QUERY_ADDR_MODE_1; break;
    case ptx_mod_addr_mode_2: m->query = IR_QUERY_ADDR_MODE_2; break;
    case ptx_mod_array_size: m->query = IR_QUERY_ARRAY_SIZE; break;
    case ptx_mod_num_mipmap_levels: m->query = IR_QUERY_NUM_MIPMAP_LEVELS; break;
    case ptx_mod_num_samples: m->query = IR_QUERY_NUM_SAMPLES; break;
    case ptx_mod_force_unnormalized_coords: m->query = IR_QUERY_FORCE_UNNORMALIZED_COORDS; break;
    case ptx_mod_row:
      m->layout = m->layout == IR_LAYOUT_ROW ? IR_LAYOUT_ROW_ROW
                  : m->layout == IR_LAYOUT_COL ? IR_LAYOUT_COL_ROW : IR_LAYOUT_ROW;
      break;
    case ptx_mod_col:
      m->layout = m->layout == IR_LAYOUT_ROW ? IR_LAYOUT_ROW_COL
                  : m->layout == IR_LAYOUT_COL ? IR_LAYOUT_COL_COL : IR_LAYOUT_COL;
      break;
    case ptx_mod_x1: m->vec = 1; break;
    case ptx_mod_x2: m->vec = 2; break;
    case ptx_mod_x4: m->vec = 4; break;
    case ptx_mod_trans: m->trans = 1; break;
    case ptx_mod_acc_f32: m->acc_f32 = 1; break;
    case ptx_mod_launch_dependents: m->gdc = IR_GDC_LAUNCH_DEPENDENTS; break;
    /* mbarrier variants (9.7.13.15.13-16) and cp.async.mbarrier.arrive.noinc
     * (9.7.9.25.3.3); ir_mods_fit_op refuses them on other ops */
    case ptx_mod_parity: m->mbar = IR_MBAR_PARITY; break;
    case ptx_mod_expect_tx: m->mbar = IR_MBAR_EXPECT_TX; break;
    case ptx_mod_noComplete: m->mbar = IR_MBAR_NOCOMPLETE; break;
    case ptx_mod_noinc: m->mbar = IR_MBAR_NOINC; break;
    case ptx_mod_L1: m->level = IR_LEVEL_L1; break;
    case ptx_mod_L2: m->level = IR_LEVEL_L2; break;
    case ptx_mod_tensormap: m->level = IR_LEVEL_TENSORMAP; break;
    case ptx_mod_fractional: m->policy = IR_POLICY_FRACTIONAL; break;
    case ptx_mod_range: m->policy = IR_POLICY_RANGE; break;
    case ptx_mod_cvt: m->policy = IR_POLICY_CVT; break;
    case ptx_mod_complete_tx_bytes: m->bulk = IR_BULK_COMPLETE_TX; break;
    case ptx_mod_bulk_group: m->bulk = IR_BULK_GROUP; break;
    case ptx_mod_read: m->bulk = IR_BULK_READ; break;
    case ptx_mod_m8n8k4: m->shape = IR_SHAPE_M8N8K4; break;
    case ptx_mod_m8n8k16: m->shape = IR_SHAPE_M8N8K16; break;
    case ptx_mod_m8n8k32: m->shape = IR_SHAPE_M8N8K32; break;
    case ptx_mod_m8n8k128: m->shape = IR_SHAPE_M8N8K128; break;
    case ptx_mod_m16n8k4: m->shape = IR_SHAPE_M16N8K4; break;
    case ptx_mod_m16n8k8: m->shape = IR_SHAPE_M16N8K8; break;
    case ptx_mod_m16n8k16: m->shape = IR_SHAPE_M16N8K16; break;
    case ptx_mod_m16n8k32: m->shape = IR_SHAPE_M16N8K32; break;
    case ptx_mod_m16n8k64: m->shape = IR_SHAPE_M16N8K64; break;
    case ptx_mod_m16n8k128: m->shape = IR_SHAPE_M16N8K128; break;
    case ptx_mod_m16n8k256: m->shape = IR_SHAPE_M16N8K256; break;
    case ptx_mod_m16n16k8: m->shape = IR_SHAPE_M16N16K8; break;
    case ptx_mod_m16n16k16: m->shape = IR_SHAPE_M16N16K16; break;
    case ptx_mod_m32n8k16: m->shape = IR_SHAPE_M32N8K16; break;
    case ptx_mod_m8n32k16: m->shape = IR_SHAPE_M8N32K16; break;
    case ptx_mod_m8n8: m->shape = IR_SHAPE_M8N8; break;
    case ptx_mod_m16n16: m->shape = IR_SHAPE_M16N16; break;
    case ptx_mod_m8n16: m->shape = IR_SHAPE_M8N16; break;
    case ptx_mod_m16n8: m->shape = IR_SHAPE_M16N8; break;
    case ptx_mod_proxy:
      if (op != ir_op_fence) return false;
      if (!m->proxy) m->proxy = IR_PROXY_GENERIC;
      break;
    case ptx_mod_alias: m->proxy = IR_PROXY_ALIAS; break;
    case ptx_mod_async: m->proxy = IR_PROXY_ASYNC; break;
    case ptx_mod_async_global: m->proxy = IR_PROXY_ASYNC_GLOBAL; break;
    case ptx_mod_async_shared_cta: m->proxy = IR_PROXY_ASYNC_SHARED_CTA; break;
    case ptx_mod_async_shared_cluster: m->proxy = IR_PROXY_ASYNC_SHARED_CLUSTER; break;
    case ptx_mod_tensormap_generic: m->proxy = IR_PROXY_TENSORMAP; break;
    default: return false;
    }
  }
  if (op == ir_op_dp4a || op == ir_op_dp2a) {
    /* dp4a.atype.btype: the result is .s32 if either is signed (9.7.1.23) */
    if (I->ntypes != 2) return false;
    m->signed_a = ir_type_kind_of(I->type) == IR_TK_SINT;
    m->signed_b = ir_type_kind_of(I->type2) == IR_TK_SINT;
    I->type = (m->signed_a || m->signed_b) ? ir_type_s32 : ir_type_u32;
    I->type2 = ir_type_none;
  }
  return true;
}

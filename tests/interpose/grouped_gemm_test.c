/*
 * interpose/core/grouped_gemm.c on its own: torch's grouped GEMM kernels
 * told apart by their mangled names (torch 2.11's, from a real profile), and
 * the products read from prepare_grouped_gemm_data's arguments, with the
 * groups' sizes from offsets whose values hysim knows or an even split.
 * Addresses are plain numbers: no device.
 */
#include <stdint.h>
#include <string.h>

#include "grouped_gemm.h"
#include "test_check.h"
#include "values.h"

static const char PREPARE[] =
    "_ZN2at4cuda6detail25prepare_grouped_gemm_dataIN7cutlass10bfloat16_tES4_S4_fN4cute5tupleIJiiiEEENS6_I"
    "JNS5_1CILi1EEElNS8_ILi0EEEEEESB_NS6_IJlS9_SA_EEEEEvPT_PT0_PT1_PT2_SK_PSE_PSG_PSI_PSK_SO_PT3_PT4_PT5_"
    "PT6_PKiiiiSt5arrayIlLm3EES10_S10_S10_S10_llbb";
static const char COOPERATIVE[] =
    "_ZN7cutlass13device_kernelIN2at4cuda6detail25enable_3x_kernel_for_sm9xINS_4gemm6kernel13GemmUniversa"
    "lINS5_17GroupProblemShapeIN4cute5tupleIJiiiEEEEENS5_10collective13CollectiveMmaINS5_39MainloopSm90Ar"
    "rayTmaGmmaWarpSpecializedILi4ENSA_IJNS9_1CILi2EEENSG_ILi1EEESI_EEENS5_43KernelPtrArrayTmaWarpSpecial"
    "izedCooperativeEEENSA_IJNSG_ILi128EEENSG_ILi256EEENSG_ILi64EEEEEENS_10bfloat16_tEPNSA_IJSI_lNSG_ILi0"
    "EEEEEESQ_ST_NS9_8TiledMMAINS9_8MMA_AtomIJNS9_4SM904GMMA28MMA_64x256x16_F32BF16BF16_SSILNSX_5MajorE1E"
    "LSZ_1ELNSX_7ScaleInE1ELS10_1EEEEEENS9_6LayoutISJ_NSA_IJSI_SR_SR_EEEEENSA_IJNS9_10UnderscoreES16_S16_"
    "EEEEENS9_13SM90_TMA_LOADENS9_14ComposedLayoutINS9_7SwizzleILi3ELi4ELi3EEENS9_18smem_ptr_flag_bitsILi"
    "16EEENS13_INSA_IJSO_NSG_ILi8EEEEEENSA_IJSI_SO_EEEEEEEvNS9_8identityENS9_23SM90_TMA_LOAD_MULTICASTES1"
    "J_vS1K_EENS_8epilogue10collective18CollectiveEpilogueINS1N_30Sm90PtrArrayTmaWarpSpecializedILi4ELi2E"
    "Li16ELb0ELb0ELi2EEEJSP_NSA_IJSM_NSG_ILi32EEEEEEvPNSA_IJlSI_SR_EEESQ_S1V_NS1N_6fusion15FusionCallback"
    "sIS1R_NS1W_17LinearCombinationISQ_fSQ_fLNS_15FloatRoundStyleE2EEESP_S1T_JEEES19_NS1A_INS1B_ILi2ELi4E"
    "Li3EEES1E_NS13_INSA_IJS1F_S1S_EEENSA_IJS1S_SI_EEEEEEENS9_17SM75_U32x4_LDSM_NENS9_14SM90_TMA_STOREES2"
    "6_NS9_17SM90_U32x4_STSM_NENS9_9Copy_AtomIJS29_NS_6half_tEEEEvEEEvvEEEEEEvNT_6ParamsE";

/* prepare_grouped_gemm_data's 27 arguments as cudaLaunchKernel passes them: the ones hysim reads set. */
typedef struct prepare_args {
    void *ptrs[14];
    const int32_t *offs;
    int32_t m, n, k;
    int64_t arrays[5][3]; /* strides of A, B, output; sizes of A, B */
    int64_t scale_strides[2];
    _Bool row_major[2];
    void *args[27];
} prepare_args;

static void *const *args_of(prepare_args *a, uintptr_t offs, int32_t m, int32_t n, int32_t k, const int64_t shape_a[3],
                            const int64_t shape_b[3])
{
    memset(a, 0, sizeof *a);
    a->offs = (const int32_t *)offs;
    a->m = m, a->n = n, a->k = k;
    memcpy(a->arrays[3], shape_a, sizeof a->arrays[3]);
    memcpy(a->arrays[4], shape_b, sizeof a->arrays[4]);
    for (int i = 0; i < 14; i++)
        a->args[i] = &a->ptrs[i];
    a->args[14] = &a->offs;
    a->args[15] = &a->m, a->args[16] = &a->n, a->args[17] = &a->k;
    for (int i = 0; i < 5; i++)
        a->args[18 + i] = a->arrays[i];
    a->args[23] = &a->scale_strides[0], a->args[24] = &a->scale_strides[1];
    a->args[25] = &a->row_major[0], a->args[26] = &a->row_major[1];
    return a->args;
}

int main(void)
{
    hs_gg_kernel p = hs_gg_kernel_of(PREPARE), g = hs_gg_kernel_of(COOPERATIVE);
    CHECK(p.role == HS_GG_PREPARE, "prepare_grouped_gemm_data is the set-up");
    CHECK(g.role == HS_GG_GEMM && g.tile_m == 128 && g.tile_n == 256 && g.cluster_m == 2 && !g.pingpong,
          "the CUTLASS kernel: Cooperative, 128 x 256 tiles, 2 x 1 clusters (%u x %u, %u)", g.tile_m, g.tile_n,
          g.cluster_m);
    char other[sizeof PREPARE];
    memcpy(other, PREPARE, sizeof PREPARE);
    other[sizeof PREPARE - 3] = 'l'; /* ...llbb -> ...lllb: another torch's arguments */
    CHECK(hs_gg_kernel_of(other).role == HS_GG_NONE, "a prepare kernel of other arguments is not read");
    CHECK(hs_gg_kernel_of(
              "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_")
                  .role == HS_GG_NONE,
          "nor is any other kernel");

    prepare_args a;
    hs_gg_problem pr;
    int64_t shape_a[3] = {65536, 2048, 0}, shape_b[3] = {8, 2048, 1408};
    int32_t ends[8] = {5312, 8016, 11280, 13584, 21088, 33312, 37376, 65536};
    hs_values_write(0x5000, ends, sizeof ends);
    CHECK(hs_gg_read(args_of(&a, 0x5000, -1, 1408, 2048, shape_a, shape_b), 8, &pr) && pr.exact &&
              pr.grouped == HS_GG_DIM_M && pr.n == 1408 && pr.k == 2048 && pr.sizes[0] == 5312 && pr.sizes[1] == 2704 &&
              pr.sizes[7] == 28160,
          "2-D x 3-D with known offsets: each group its rows (%u %u %u)", pr.sizes[0], pr.sizes[1], pr.sizes[7]);
    uint32_t ended[8];
    memcpy(ended, pr.sizes, sizeof ended);
    CHECK(hs_gg_read(args_of(&a, 0x5000, -1, 1408, 2048, shape_a, shape_b), 8, &pr) && pr.exact &&
              !memcmp(ended, pr.sizes, sizeof ended),
          "a second read sees the same offsets (hysim's read is not the program's)");
    shape_a[0] = 65539;
    CHECK(hs_gg_read(args_of(&a, 0x9000, -1, 1408, 2048, shape_a, shape_b), 8, &pr) && !pr.exact &&
              pr.sizes[0] == 8193 && pr.sizes[2] == 8193 && pr.sizes[3] == 8192,
          "unknown offsets: the rows split evenly (%u, %u)", pr.sizes[0], pr.sizes[3]);
    int64_t xt[3] = {256, 65536, 0}, g2[3] = {65536, 512, 0};
    CHECK(hs_gg_read(args_of(&a, 0x5000, 256, 512, -1, xt, g2), 8, &pr) && pr.exact && pr.grouped == HS_GG_DIM_K &&
              pr.m == 256 && pr.n == 512 && pr.sizes[7] == 28160,
          "2-D x 2-D (a weight gradient): each group its depth");
    CHECK(!hs_gg_read(args_of(&a, 0x5000, -1, 1408, 1024, shape_a, shape_b), 8, &pr),
          "arguments that disagree with the shapes are not read");
    CHECK(!hs_gg_read(args_of(&a, 0x5000, -1, 1408, 2048, shape_a, shape_b), HS_GG_MAX_GROUPS + 1, &pr),
          "nor more groups than hysim models");
    printf("grouped gemm: ok\n");
    return 0;
}

"""Lu rounds with divmod, unpacks the limits into named variables in one line, and writes
predict_occupancy with a conditional expression. Correct: full marks."""

NOTEBOOKS = ["06_tile_sweep"]
BASE = "solutions"
ANSWERS = {
    "06_tile_sweep": {
        "predict_blocks_per_sm": '''def ceil_to(x, unit):
    q, r = divmod(x, unit)
    return (q + (r > 0)) * unit


def predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block):
    max_warps, max_blocks, regs_per_sm, reg_unit, smem_per_sm, reserved, smem_unit = \\
        sm_limits(cc)
    warps = ceil_to(threads_per_block, 32) // 32
    candidates = [max_warps // warps, max_blocks]
    regs_per_warp = ceil_to(regs_per_thread * 32, reg_unit)
    if regs_per_warp > 0:
        candidates.append((regs_per_sm // 4 // regs_per_warp) * 4 // warps)
    smem = ceil_to(smem_per_block + reserved, smem_unit)
    candidates.append(smem_per_sm // smem if smem > 0 else max_blocks)
    return int(min(candidates))
''',
        "predict_occupancy": '''def predict_occupancy(cc, threads_per_block, regs_per_thread, smem_per_block):
    warps = ceil_to(threads_per_block, 32) // 32
    blocks = predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block)
    return 0.0 if blocks == 0 else blocks * warps / sm_limits(cc)[0]
''',
    },
}
EXPECTED = {"06_tile_sweep": 5}

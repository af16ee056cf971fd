"""Ka computes occupancy with math.ceil and math.floor, names the limits with a dict, and takes
the minimum over a comprehension. Correct: full marks (the written answer is graded by hand)."""

NOTEBOOKS = ["06_tile_sweep"]
BASE = "solutions"
ANSWERS = {
    "06_tile_sweep": {
        "predict_blocks_per_sm": '''import math


def round_up(x, unit):
    return math.ceil(x / unit) * unit


def predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block):
    names = ("warps", "blocks", "regs", "reg_unit", "smem", "reserved", "smem_unit")
    lim = dict(zip(names, sm_limits(cc)))
    warps = math.ceil(threads_per_block / 32)
    limits = {"warps": lim["warps"] // warps, "blocks": lim["blocks"]}
    regs_per_warp = round_up(regs_per_thread * 32, lim["reg_unit"])
    if regs_per_warp:
        limits["registers"] = math.floor(lim["regs"] / 4 / regs_per_warp) * 4 // warps
    smem = round_up(smem_per_block + lim["reserved"], lim["smem_unit"])
    if smem:
        limits["shared memory"] = lim["smem"] // smem
    return min([count for count in limits.values()])
''',
        "predict_occupancy": '''def predict_occupancy(cc, threads_per_block, regs_per_thread, smem_per_block):
    blocks = predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block)
    return blocks * math.ceil(threads_per_block / 32) / sm_limits(cc)[0]
''',
    },
}
EXPECTED = {"06_tile_sweep": 5}
